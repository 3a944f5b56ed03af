#!/usr/bin/python3
"""A minimal Varlink client for the systemd box tests, independent of Proctor's own code.

    varlink-call.py [--hold SECONDS] [--repeat N] SOCKET CALL...

Each CALL is `interface.Method` or `interface.Method={"json": "parameters"}`, made in order
on one connection (an Agent session belongs to its connection). In parameters, the string
"@session" stands for the `session` of the last reply that carried one. Prints each reply's
parameters as one JSON line; with --hold the connection then stays open (and the sessions
it opened alive) for SECONDS before the client exits. With --repeat the last CALL is made N
times, pipelined a few hundred at a time (a flood), and prints how many of its replies were
each distinct line, as `COUNT LINE`. A Varlink error reply prints `error NAME {parameters}` on
standard error and exits 1; a connection failure exits 2.
"""
import json
import socket
import sys
import time


def substitute(value, session):
    if value == "@session":
        return session
    if isinstance(value, dict):
        return {key: substitute(item, session) for key, item in value.items()}
    if isinstance(value, list):
        return [substitute(item, session) for item in value]
    return value


def main():
    arguments = sys.argv[1:]
    hold = 0.0
    repeat = 1
    while arguments[:1] in (["--hold"], ["--repeat"]) and len(arguments) > 1:
        if arguments[0] == "--hold":
            hold = float(arguments[1])
        else:
            repeat = int(arguments[1])
        arguments = arguments[2:]
    if len(arguments) < 2:
        sys.exit(__doc__)
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    connection.settimeout(20)
    try:
        connection.connect(arguments[0])
    except OSError as error:
        print(f"cannot connect to {arguments[0]}: {error}", file=sys.stderr)
        sys.exit(2)
    buffered = b""
    session = None

    def receive(method):
        nonlocal buffered, session
        while b"\0" not in buffered:
            chunk = connection.recv(65536)
            if not chunk:
                print(f"{method}: the connection closed before a reply", file=sys.stderr)
                sys.exit(2)
            buffered += chunk
        raw, _, buffered = buffered.partition(b"\0")
        reply = json.loads(raw)
        if "error" in reply:
            print(f"error {reply['error']} {json.dumps(reply.get('parameters', {}))}", file=sys.stderr)
            sys.exit(1)
        parameters = reply.get("parameters", {})
        session = parameters.get("session", session)
        return json.dumps(parameters, sort_keys=True)

    calls = arguments[1:]
    for index, call in enumerate(calls):
        method, _, parameters = call.partition("=")
        message = {"method": method,
                   "parameters": substitute(json.loads(parameters), session) if parameters else {}}
        frame = json.dumps(message).encode() + b"\0"
        if index < len(calls) - 1 or repeat == 1:
            connection.sendall(frame)
            print(receive(method), flush=True)
            continue
        counts = {}
        for start in range(0, repeat, 256):
            batch = min(256, repeat - start)
            connection.sendall(frame * batch)
            for _ in range(batch):
                line = receive(method)
                counts[line] = counts.get(line, 0) + 1
        for line, count in sorted(counts.items()):
            print(count, line, flush=True)
    time.sleep(hold)


if __name__ == "__main__":
    main()
