#!/usr/bin/python3
"""A minimal Varlink client for the systemd box tests, independent of Proctor's own code.

    varlink-call.py SOCKET CALL...

Each CALL is `interface.Method` or `interface.Method={"json": "parameters"}`, made in order
on one connection (an Agent session belongs to its connection). In parameters, the string
"@session" stands for the `session` of the last reply that carried one. Prints each reply's
parameters as one JSON line. A Varlink error reply prints `error NAME {parameters}` on
standard error and exits 1; a connection failure exits 2.
"""
import json
import socket
import sys


def substitute(value, session):
    if value == "@session":
        return session
    if isinstance(value, dict):
        return {key: substitute(item, session) for key, item in value.items()}
    if isinstance(value, list):
        return [substitute(item, session) for item in value]
    return value


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    connection.settimeout(20)
    try:
        connection.connect(sys.argv[1])
    except OSError as error:
        print(f"cannot connect to {sys.argv[1]}: {error}", file=sys.stderr)
        sys.exit(2)
    buffered = b""
    session = None
    for call in sys.argv[2:]:
        method, _, parameters = call.partition("=")
        message = {"method": method,
                   "parameters": substitute(json.loads(parameters), session) if parameters else {}}
        connection.sendall(json.dumps(message).encode() + b"\0")
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
        print(json.dumps(parameters, sort_keys=True))


if __name__ == "__main__":
    main()
