// Field numbers of onnx/onnx.proto that the BlazeFace rewrites read and write
// (rewrite-blazeface.ts, widen-blazeface.ts), and the enum values they need.

export const MODEL_GRAPH = 7;

export const GRAPH_NODE = 1;
export const GRAPH_INITIALIZER = 5;
export const GRAPH_INPUT = 11;
export const GRAPH_OUTPUT = 12;
export const GRAPH_VALUE_INFO = 13;

export const NODE_INPUT = 1;
export const NODE_OUTPUT = 2;
export const NODE_OP_TYPE = 4;
export const NODE_ATTRIBUTE = 5;

export const ATTRIBUTE_NAME = 1;
export const ATTRIBUTE_I = 3;

export const TENSOR_DIMS = 1;
export const TENSOR_DATA_TYPE = 2;
export const TENSOR_INT64_DATA = 7;
export const TENSOR_NAME = 8;
export const TENSOR_RAW_DATA = 9;

export const VALUE_INFO_NAME = 1;
export const VALUE_INFO_TYPE = 2;
export const TYPE_TENSOR = 1;
export const TENSOR_TYPE_SHAPE = 2;
export const SHAPE_DIM = 1;
export const DIM_VALUE = 1;

/** TensorProto.DataType values. */
export const FLOAT = 1;
export const INT64 = 7;
