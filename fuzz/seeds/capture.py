#!/usr/bin/env python3
"""Captures the fuzz targets' seed corpora from a real nats-server (the one on PATH).

Starts nats-server with JetStream and a WebSocket listener on free 127.0.0.1 ports, talks to
it over raw sockets, and writes what the server sends into fuzz/corpus/<target>/. Run from
anywhere: python3 fuzz/seeds/capture.py. Object Store metadata and Service API replies are
written by clients, not the server, so their seeds are written out here in the shape
rnats and the other clients store and send them.
"""

import base64
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "corpus")


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def save(target, name, data):
    os.makedirs(os.path.join(CORPUS, target), exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(CORPUS, target, name), "wb") as f:
        f.write(data)


class Conn:
    """A raw NATS connection that keeps every byte the server sent."""

    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        self.buf = b""
        self.log = b""
        line = self.line()
        self.info = line[len(b"INFO "):]
        self.send(b'CONNECT {"verbose":false,"pedantic":false,"headers":true,'
                  b'"no_responders":true,"protocol":1,"lang":"capture","version":"0"}\r\n')
        self.send(b"SUB _INBOX.cap.* 1\r\nPING\r\n")
        while self.line() != b"PONG":
            pass
        self.n = 0

    def send(self, data):
        self.sock.sendall(data)

    def fill(self):
        chunk = self.sock.recv(65536)
        if not chunk:
            raise EOFError
        self.buf += chunk
        self.log += chunk

    def line(self):
        while b"\r\n" not in self.buf:
            self.fill()
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def frame(self):
        """The next MSG/HMSG: (raw frame, reply, header block, payload)."""
        while True:
            before = len(self.buf)
            line = self.line()
            parts = line.split()
            if parts[0] == b"PING":
                self.send(b"PONG\r\n")
                continue
            if parts[0] not in (b"MSG", b"HMSG"):
                continue
            total = int(parts[-1])
            hdr = int(parts[-2]) if parts[0] == b"HMSG" else 0
            reply = parts[3] if len(parts) == (6 if hdr else 5) else None
            while len(self.buf) < total + 2:
                self.fill()
            body, self.buf = self.buf[:total], self.buf[total + 2:]
            raw = line + b"\r\n" + body + b"\r\n"
            return raw, reply, body[:hdr], body[hdr:]

    def request(self, subject, payload=b"", headers=None):
        self.n += 1
        reply = b"_INBOX.cap.%d" % self.n
        subject = subject.encode() if isinstance(subject, str) else subject
        payload = payload.encode() if isinstance(payload, str) else payload
        if headers:
            block = b"NATS/1.0\r\n" + b"".join(b"%s: %s\r\n" % (k, v) for k, v in headers) + b"\r\n"
            self.send(b"HPUB %s %s %d %d\r\n%s%s\r\n" % (
                subject, reply, len(block), len(block) + len(payload), block, payload))
        else:
            self.send(b"PUB %s %s %d\r\n%s\r\n" % (subject, reply, len(payload), payload))
        return self.frame()


def main():
    tmp = tempfile.mkdtemp(prefix="rnats-seeds-")
    port, ws_port = free_port(), free_port()
    conf = os.path.join(tmp, "server.conf")
    with open(conf, "w") as f:
        f.write('listen: "127.0.0.1:%d"\njetstream { store_dir: "%s" }\n'
                'websocket { listen: "127.0.0.1:%d", no_tls: true }\n' % (port, tmp, ws_port))
    server = subprocess.Popen(["nats-server", "-c", conf], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.05)
        capture(port, ws_port)
    finally:
        server.terminate()
        server.wait()
        shutil.rmtree(tmp, ignore_errors=True)


def capture(port, ws_port):
    c = Conn(port)
    save("server_info", "info_jetstream.json", c.info)
    api = []  # (name, payload) of JetStream API replies

    def js(name, subject, body=""):
        raw, _, hdrs, payload = c.request(subject, body)
        api.append((name, payload))
        return raw, payload

    js("account_info", "$JS.API.INFO")
    js("stream_create", "$JS.API.STREAM.CREATE.ORDERS",
       json.dumps({"name": "ORDERS", "subjects": ["orders.>"], "allow_direct": True,
                   "duplicate_window": 60_000_000_000}))
    js("stream_exists", "$JS.API.STREAM.CREATE.ORDERS",
       json.dumps({"name": "ORDERS", "subjects": ["other.>"]}))
    js("stream_not_found", "$JS.API.STREAM.INFO.NOPE")
    _, _, _, ack = c.request("orders.1", "first")
    api.append(("pub_ack", ack))
    raw, _, _, ack = c.request("orders.2", "second", [(b"Nats-Msg-Id", b"a1")])
    api.append(("pub_ack_id", ack))
    save("headers", "hpub_msg_id.bin", b"NATS/1.0\r\nNats-Msg-Id: a1\r\n\r\n")
    _, _, _, ack = c.request("orders.2", "second", [(b"Nats-Msg-Id", b"a1")])
    api.append(("pub_ack_duplicate", ack))
    _, _, _, ack = c.request("orders.3", "x", [(b"Nats-Expected-Last-Sequence", b"1")])
    api.append(("pub_wrong_last_sequence", ack))
    js("stream_info", "$JS.API.STREAM.INFO.ORDERS")
    js("stream_info_subjects", "$JS.API.STREAM.INFO.ORDERS", '{"subjects_filter":">"}')
    js("stream_names", "$JS.API.STREAM.NAMES")
    js("stream_list", "$JS.API.STREAM.LIST")
    js("msg_get", "$JS.API.STREAM.MSG.GET.ORDERS", '{"seq":2}')
    js("msg_get_missing", "$JS.API.STREAM.MSG.GET.ORDERS", '{"seq":99}')
    js("consumer_create", "$JS.API.CONSUMER.CREATE.ORDERS.D",
       json.dumps({"stream_name": "ORDERS", "config": {
           "durable_name": "D", "ack_policy": "explicit", "max_ack_pending": 100}}))
    js("consumer_info", "$JS.API.CONSUMER.INFO.ORDERS.D")
    js("consumer_names", "$JS.API.CONSUMER.NAMES.ORDERS")
    js("consumer_list", "$JS.API.CONSUMER.LIST.ORDERS")
    js("consumer_pause", "$JS.API.CONSUMER.PAUSE.ORDERS.D",
       '{"pause_until":"2099-01-01T00:00:00Z"}')
    js("consumer_unpause", "$JS.API.CONSUMER.PAUSE.ORDERS.D", "{}")

    # A pull: two messages, then the 408 that ends the request when it expires.
    c.n += 1
    c.send(b'PUB $JS.API.CONSUMER.MSG.NEXT.ORDERS.D _INBOX.cap.pull 36\r\n'
           b'{"batch":3,"expires":300000000}\r\n'.replace(b"36", b"%d" % len(
               b'{"batch":3,"expires":300000000}')))
    pulled = []
    for _ in range(3):
        raw, reply, hdrs, payload = c.frame()
        pulled.append(raw)
        if reply and reply.startswith(b"$JS.ACK."):
            save("ack_subject", "v1_%d" % len(pulled), b"\0\0\0\0" + reply)
        if hdrs:
            save("headers", "pull_status_%d.bin" % len(pulled), hdrs)
    save("parser", "pull_deliveries", b"\x47" + b"".join(pulled))
    c.send(b"PUB %s 0\r\n\r\n" % b"$JS.ACK.ORDERS.D.1.1.1.0.0")  # harmless: acks nothing real

    raw, _, hdrs, _ = c.request("$JS.API.DIRECT.GET.ORDERS", '{"seq":2}')
    save("headers", "direct_get.bin", hdrs)
    raw_missing, _, hdrs, _ = c.request("$JS.API.DIRECT.GET.ORDERS", '{"seq":99}')
    save("headers", "direct_get_404.bin", hdrs)
    save("parser", "direct_get", b"\x47" + raw + raw_missing)
    _, _, hdrs, _ = c.request("nobody.listens", "x")
    save("headers", "no_responders.bin", hdrs)

    # Key-Value: a bucket's stream, a put, a delete marker, a purge, read by direct get and
    # by an ordered push consumer, as a watch reads them.
    js("kv_create", "$JS.API.STREAM.CREATE.KV_b", json.dumps({
        "name": "KV_b", "subjects": ["$KV.b.>"], "max_msgs_per_subject": 5,
        "allow_direct": True, "allow_rollup_hdrs": True, "deny_delete": True,
        "discard": "new", "num_replicas": 1}))
    c.request("$KV.b.k", "v1")
    c.request("$KV.b.k", "", [(b"KV-Operation", b"DEL")])
    c.request("$KV.b.gone", "x")
    c.request("$KV.b.gone", "", [(b"KV-Operation", b"PURGE"), (b"Nats-Rollup", b"sub")])
    frames = []
    for key in ("k", "gone"):
        raw, _, hdrs, _ = c.request("$JS.API.DIRECT.GET.KV_b.$KV.b." + key)
        frames.append(raw)
        save("headers", "kv_direct_%s.bin" % key, hdrs)
    save("kv_entry", "direct_get", b"".join(frames))
    c.send(b"SUB _INBOX.watch 2\r\n")
    js("kv_watch_consumer", "$JS.API.CONSUMER.CREATE.KV_b", json.dumps({
        "stream_name": "KV_b", "config": {
            "deliver_subject": "_INBOX.watch", "deliver_policy": "all", "ack_policy": "none",
            "flow_control": True, "idle_heartbeat": 5_000_000_000, "headers_only": False,
            "mem_storage": True, "num_replicas": 1}}))
    watched = []
    for _ in range(3):
        raw, reply, hdrs, _ = c.frame()
        watched.append(raw)
        if reply and reply.startswith(b"$JS.ACK."):
            save("ack_subject", "v1_watch_%d" % len(watched), b"\0\0\0\0" + reply)
    save("kv_entry", "watch", b"".join(watched))
    save("parser", "kv_watch", b"\x47" + b"".join(watched))

    # Message tracing (ADR-41): the server reports a traced publish's path as JSON.
    for name, subject in (("into_stream", b"orders.9"), ("egress", b"_INBOX.cap.traced")):
        block = b"NATS/1.0\r\nNats-Trace-Dest: _INBOX.cap.trace\r\nNats-Trace-Only: true\r\n\r\n"
        c.send(b"HPUB %s %d %d\r\n%sx\r\n" % (subject, len(block), len(block) + 1, block))
        while True:
            raw, _, _, payload = c.frame()
            if raw.startswith(b"MSG _INBOX.cap.trace "):
                break
        save("trace_report", name + ".json", payload)

    for name, payload in api:
        save("jetstream_api", name + ".json", payload)
    save("parser", "session_tcp", b"\x47" + c.log[:4096])
    c.sock.close()

    # The same server over WebSocket: the upgrade, then the frames it sends.
    ws = socket.create_connection(("127.0.0.1", ws_port), timeout=5)
    key = base64.b64encode(os.urandom(16))
    ws.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
               b"Connection: Upgrade\r\nSec-WebSocket-Key: " + key +
               b"\r\nSec-WebSocket-Version: 13\r\n\r\n")
    got = b""
    while b"\r\n\r\n" not in got:
        got += ws.recv(65536)
    frames = got.split(b"\r\n\r\n", 1)[1]

    def send_ws(data):
        mask = os.urandom(4)
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(data))
        ws.sendall(bytes([0x82, 0x80 | len(data)]) + mask + masked)

    send_ws(b'CONNECT {"verbose":false,"headers":true,"protocol":1}\r\nPING\r\n')
    send_ws(b"SUB a 1\r\nPUB a 5\r\nhello\r\nHPUB a 16 18\r\nNATS/1.0\r\nA: b\r\n\r\nhi\r\n")
    send_ws(b"PING\r\n")
    deadline = time.time() + 5
    while frames.count(b"PONG") < 2 and time.time() < deadline:
        frames += ws.recv(65536)
    ws.close()
    save("websocket", "session", b"\x07" + frames)
    info = re.search(rb"INFO (\{.*?\})\r\n", frames)
    if info:
        save("server_info", "info_websocket.json", info.group(1))

    write_client_documents()


def write_client_documents():
    """Seeds for what clients, not the server, write: Object Store metadata and service
    replies, in the shape the clients use."""
    save("object_info", "object.json", json.dumps({
        "name": "photo.jpg", "description": "a photo", "headers": {"Color": ["red", "blue"]},
        "options": {"max_chunk_size": 131072}, "bucket": "o", "nuid": "H1X2aFpKvYI7Ng8bYZzBtO",
        "size": 262145, "mtime": "2025-06-01T12:00:00.123456789Z", "chunks": 3,
        "digest": "SHA-256=47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU=",
        "metadata": {"owner": "ops"}}))
    save("object_info", "link.json", json.dumps({
        "name": "alias", "bucket": "o", "nuid": "H1X2aFpKvYI7Ng8bYZzBu1", "size": 0,
        "mtime": "2025-06-01T12:00:00Z", "chunks": 0, "digest": "",
        "options": {"link": {"bucket": "o", "name": "photo.jpg"}}}))
    save("object_info", "deleted.json", json.dumps({
        "name": "old", "bucket": "o", "nuid": "x", "size": 0, "chunks": 0,
        "mtime": "2025-06-01T12:00:00Z", "deleted": True}))
    base = {"name": "adder", "id": "X6R2XyKTzHHI4e2R1CEJfK", "version": "1.2.3",
            "metadata": {"team": "math"}}
    save("service", "ping.json", json.dumps(dict(base, type="io.nats.micro.v1.ping_response")))
    save("service", "info.json", json.dumps(dict(
        base, type="io.nats.micro.v1.info_response", description="adds",
        endpoints=[{"name": "add", "subject": "math.add", "queue_group": "q",
                    "metadata": {"unit": "n"}}])))
    save("service", "stats.json", json.dumps(dict(
        base, type="io.nats.micro.v1.stats_response", started="2025-06-01T12:00:00.5Z",
        endpoints=[{"name": "add", "subject": "math.add", "queue_group": "q",
                    "num_requests": 10, "num_errors": 1, "last_error": "500:boom",
                    "processing_time": 123456, "average_processing_time": 12345,
                    "data": {"custom": [1, 2.5, None, "x"]}}])))


if __name__ == "__main__":
    sys.exit(main())
