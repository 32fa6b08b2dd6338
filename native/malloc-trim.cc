// malloc_trim(0) for the analytics workers (lib/jobs/free-memory.ts). glibc keeps the memory a job
// frees inside its heaps, and the pages stay resident; malloc_trim hands every whole free page
// back to the kernel. Node has no binding for it, hence this addon, built by `make`.
#include <malloc.h>
#include <node_api.h>

static napi_value Trim(napi_env env, napi_callback_info) {
  napi_value released;
  napi_get_boolean(env, malloc_trim(0) == 1, &released);
  return released;
}

NAPI_MODULE_INIT() {
  napi_value trim;
  napi_create_function(env, "trim", NAPI_AUTO_LENGTH, Trim, nullptr, &trim);
  napi_set_named_property(env, exports, "trim", trim);
  return exports;
}
