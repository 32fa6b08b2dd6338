#!/usr/bin/python3
# An RTSP server of test cameras for the tests and benches (testkit/rtsp-server.ts starts it).
#
#   /usr/bin/python3 testkit/rtsp/serve.py [--address 127.0.0.1] [--port 0] --mount NAME=FILE ...
#
# Each mount (rtsp://ADDRESS:PORT/NAME) plays its file as a camera's live stream: looping, at
# real-time pace, with timestamps that keep increasing across loops. The files are MPEG-TS
# holding H.264 (scripts/make-stream-fixtures.ts writes them), sent as they are stored:
#
#   multifilesrc loop=true ! tsdemux ! h264parse ! rtph264pay
#
# MPEG-TS because multifilesrc re-reads the file at its end and tsdemux turns the restart of the
# clock into a continuation, while raw H.264 leaves h264parse without presentation timestamps
# (rtph264pay would stamp every frame alike). Nothing is decoded or encoded, so a stream costs
# about half a percent of a core (measured on 2 cores with 768x576 streams and ffmpeg readers:
# 20 mounts with a reader each 11% of one core, 50 mounts 19%; 20 readers of one mount 2%). The
# readers of a mount share its pipeline; when the last one leaves, the next one starts the file
# again.
#
# With RTSP_USER and RTSP_PASSWORD in the environment, every mount asks for these Basic
# credentials (401 otherwise).
#
# Commands arrive on stdin as JSON lines, each answered by one JSON line on stdout with the same
# "id" and "ok" (false with an "error" when it failed):
#   {"id": 1, "op": "switch", "mount": "cam1", "file": "/x/blurred.mpegts"}  new readers get it
#   {"id": 2, "op": "stall", "mount": "cam1"}    readers get OPTIONS, DESCRIBE, SETUP and PLAY
#                                                answered, then no picture: current readers stop
#                                                receiving too
#   {"id": 3, "op": "resume", "mount": "cam1"}   new readers get pictures again; a stalled
#                                                session stays stalled, as with a real camera
#   {"id": 4, "op": "add", "mount": "cam2", "file": "..."}   {"id": 5, "op": "remove", "mount": "cam2"}
#   {"id": 6, "op": "status"}                    answers "mounts": {name: {file, stalled, pipelines}}
# The first line on stdout is {"event": "ready", "port": N} once the server listens. The server
# exits on SIGTERM, SIGINT or the end of stdin (its parent's exit closes it).
#
# Debian packages: python3-gi, gir1.2-gst-rtsp-server-1.0, gstreamer1.0-plugins-good
# (multifilesrc, rtph264pay, rtpbin), gstreamer1.0-plugins-bad (tsdemux, h264parse) and the
# gstreamer1.0-plugins-base these bring (appsink, which rtsp-server sends TCP readers' data with).
import argparse
import json
import os
import re
import signal
import sys

import gi

gi.require_version('Gst', '1.0')
gi.require_version('GstRtspServer', '1.0')
from gi.repository import GLib, Gst, GstRtspServer  # noqa: E402

# The role every authenticated user gets; it may open (access) and start (construct) any mount.
VIEWER_ROLE = 'viewer'
# Mount names: path segments of URL-safe characters, so that a name is its own URL path.
MOUNT_NAME = re.compile(r'^[A-Za-z0-9._~-]+(/[A-Za-z0-9._~-]+)*$')
# Every MPEG-TS packet starts with this byte; a file that does not is refused at once rather than
# failing at the reader's DESCRIBE.
TS_SYNC_BYTE = 0x47
# Seconds between sweeps of the RTSP sessions whose reader vanished without a TEARDOWN.
SESSION_SWEEP_S = 2


def launch_line(file):
    """The pipeline of one mount's media; pay0 is the payloader rtsp-server looks for."""
    location = file.replace('\\', '\\\\').replace('"', '\\"')
    # config-interval=-1: SPS and PPS before every keyframe, so a reader joining a shared stream
    # decodes from the next keyframe on.
    return (f'( multifilesrc location="{location}" loop=true ! tsdemux ! h264parse'
            ' ! rtph264pay name=pay0 pt=96 config-interval=-1 )')


def check_stream_file(file):
    try:
        with open(file, 'rb') as f:
            first = f.read(1)
    except OSError as err:
        raise ValueError(f'cannot read {file}: {err.strerror}')
    if first != bytes([TS_SYNC_BYTE]):
        raise ValueError(f'{file} is not an MPEG-TS file (H.264 in MPEG-TS is served)')


def hold_after(passes):
    """
    A blocking pad probe that lets `passes` buffers through, then holds the streaming thread:
    no more data flows and no CPU is spent, until the pipeline is torn down (which releases it).
    """
    left = [passes]

    def probe(_pad, info):
        if info.type & (Gst.PadProbeType.BUFFER | Gst.PadProbeType.BUFFER_LIST):
            if left[0] > 0:
                left[0] -= 1
                return Gst.PadProbeReturn.PASS
            return Gst.PadProbeReturn.OK
        # Events (caps, segment) pass: the session description is made from the caps.
        return Gst.PadProbeReturn.PASS

    return probe


def stall_media(media, passes):
    payloader = media.get_element().get_by_name('pay0')
    if payloader is not None:
        payloader.get_static_pad('src').add_probe(Gst.PadProbeType.BLOCK_DOWNSTREAM, hold_after(passes))


class Mount:
    """One camera: its file, whether it stalls, and the pipelines its readers currently use."""

    def __init__(self, name, file):
        self.name = name
        self.file = file
        self.stalled = False
        self.medias = set()

    def factory(self, permissions):
        """
        A new factory for the mount's current file and state. Each change installs a new one, so
        that a new reader never joins a pipeline made before the change (readers share pipelines).
        """
        factory = GstRtspServer.RTSPMediaFactory()
        factory.set_launch(launch_line(self.file))
        factory.set_shared(True)
        # Published clock and offset make rtsp-server treat the stream as live, not seekable: it
        # then ignores the `Range: npt=0-` of a reader's PLAY instead of seeking the shared
        # pipeline back (which fails on a looping source and answers 503).
        factory.set_publish_clock_mode(GstRtspServer.RTSPPublishClockMode.CLOCK_AND_OFFSET)
        if permissions is not None:
            factory.set_permissions(permissions)
        stalled = self.stalled
        factory.connect('media-configure', lambda _f, media: self.configure(media, stalled))
        return factory

    def configure(self, media, stalled):
        self.medias.add(media)
        media.connect('unprepared', lambda m: self.medias.discard(m))
        if stalled:
            # One buffer (SPS and PPS) reaches the server's sinks, which is what DESCRIBE waits
            # for; the pictures after it never come.
            stall_media(media, 1)

    def stall_current_readers(self):
        for media in list(self.medias):
            stall_media(media, 0)


class CameraServer:
    def __init__(self, address, port, credentials):
        self.server = GstRtspServer.RTSPServer()
        self.server.set_address(address)
        self.server.set_service(str(port))
        self.mounts = {}
        self.permissions = None
        if credentials is not None:
            auth = GstRtspServer.RTSPAuth()
            token = GstRtspServer.RTSPToken()
            token.set_string(GstRtspServer.RTSP_TOKEN_MEDIA_FACTORY_ROLE, VIEWER_ROLE)
            auth.add_basic(GstRtspServer.RTSPAuth.make_basic(*credentials), token)
            self.server.set_auth(auth)
            self.permissions = GstRtspServer.RTSPPermissions()
            self.permissions.add_permission_for_role(VIEWER_ROLE, GstRtspServer.RTSP_PERM_MEDIA_FACTORY_ACCESS, True)
            self.permissions.add_permission_for_role(VIEWER_ROLE, GstRtspServer.RTSP_PERM_MEDIA_FACTORY_CONSTRUCT, True)

    def listen(self):
        """Binds the port (raises GLib.Error when taken) and returns the port bound."""
        source = self.server.create_source(None)
        source.attach(None)
        pool = self.server.get_session_pool()
        GLib.timeout_add_seconds(SESSION_SWEEP_S, lambda: pool.cleanup() >= 0)
        return self.server.get_bound_port()

    def install(self, mount):
        self.server.get_mount_points().add_factory('/' + mount.name, mount.factory(self.permissions))

    def mount(self, name):
        if name not in self.mounts:
            raise ValueError(f'no mount {name}')
        return self.mounts[name]

    def add(self, name, file):
        if not isinstance(name, str) or not MOUNT_NAME.match(name):
            raise ValueError(f'bad mount name {name!r}: use letters, digits and ._~- (and / between parts)')
        if name in self.mounts:
            raise ValueError(f'mount {name} exists')
        check_stream_file(file)
        self.mounts[name] = Mount(name, file)
        self.install(self.mounts[name])

    def switch(self, name, file):
        mount = self.mount(name)
        check_stream_file(file)
        mount.file = file
        self.install(mount)

    def stall(self, name):
        mount = self.mount(name)
        mount.stalled = True
        mount.stall_current_readers()
        self.install(mount)

    def resume(self, name):
        mount = self.mount(name)
        mount.stalled = False
        self.install(mount)

    def remove(self, name):
        self.mount(name)
        del self.mounts[name]
        self.server.get_mount_points().remove_factory('/' + name)

    def status(self):
        return {name: {'file': m.file, 'stalled': m.stalled, 'pipelines': len(m.medias)} for name, m in self.mounts.items()}

    def run(self, command):
        """One command of the control channel; returns the fields of the answer besides id and ok."""
        op = command.get('op')
        if op in ('add', 'switch'):
            file = command.get('file')
            if not isinstance(file, str):
                raise ValueError(f'{op} needs a file')
            getattr(self, op)(command.get('mount'), file)
        elif op in ('stall', 'resume', 'remove'):
            getattr(self, op)(command.get('mount'))
        elif op == 'status':
            return {'mounts': self.status()}
        else:
            raise ValueError(f'unknown op {op!r}')
        return {}


def say(message):
    sys.stdout.write(json.dumps(message) + '\n')
    sys.stdout.flush()


def answer(cameras, line):
    try:
        command = json.loads(line)
        if not isinstance(command, dict):
            raise ValueError('a command is a JSON object')
    except ValueError as err:
        say({'ok': False, 'error': f'bad command: {err}'})
        return
    try:
        say({'id': command.get('id'), 'ok': True, **cameras.run(command)})
    except (ValueError, KeyError, TypeError) as err:
        say({'id': command.get('id'), 'ok': False, 'error': str(err)})


def read_commands(cameras, loop):
    pending = bytearray()

    def on_input(fd, condition):
        chunk = os.read(fd, 65536) if condition & (GLib.IOCondition.IN | GLib.IOCondition.HUP) else b''
        if not chunk:
            loop.quit()
            return False
        pending.extend(chunk)
        while b'\n' in pending:
            line, _, rest = bytes(pending).partition(b'\n')
            pending[:] = rest
            if line.strip():
                answer(cameras, line.decode('utf-8', 'replace'))
        return True

    GLib.io_add_watch(sys.stdin.fileno(), GLib.PRIORITY_DEFAULT, GLib.IOCondition.IN | GLib.IOCondition.HUP | GLib.IOCondition.ERR, on_input)


def parse_args(argv):
    parser = argparse.ArgumentParser(description='RTSP test cameras looping MPEG-TS files')
    parser.add_argument('--address', default='127.0.0.1')
    parser.add_argument('--port', type=int, default=0, help='0: any free port (the ready line names it)')
    parser.add_argument('--mount', action='append', default=[], metavar='NAME=FILE')
    return parser.parse_args(argv)


def main(argv):
    args = parse_args(argv)
    Gst.init(None)
    user, password = os.environ.get('RTSP_USER'), os.environ.get('RTSP_PASSWORD')
    cameras = CameraServer(args.address, args.port, (user, password) if user and password else None)
    try:
        for spec in args.mount:
            name, sep, file = spec.partition('=')
            if not sep:
                raise ValueError(f'--mount {spec}: expected NAME=FILE')
            cameras.add(name, file)
        port = cameras.listen()
    except (ValueError, GLib.Error) as err:
        print(f'serve.py: {err}', file=sys.stderr)
        return 2
    loop = GLib.MainLoop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        GLib.unix_signal_add(GLib.PRIORITY_HIGH, sig, lambda: loop.quit() or False)
    read_commands(cameras, loop)
    say({'event': 'ready', 'port': port})
    loop.run()
    return 0


if __name__ == '__main__':
    code = main(sys.argv[1:])
    sys.stdout.flush()
    sys.stderr.flush()
    # Streaming threads may sit in a pad probe (a stalled mount); the interpreter's own shutdown
    # would wait on or race them, and there is nothing left to tidy: the sockets close with the process.
    os._exit(code)
