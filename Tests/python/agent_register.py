"""A managed app's first call, with nothing but the standard library, for tests that run it
as another program, user or mount namespace: registers as APP_ID on the Agent socket SOCKET
and prints the outcome ("registered" or the Varlink error's name) on one line. With
--repeat it then registers again, on a fresh connection, each time a line arrives on
standard input, until standard input ends. SOCKET "fd:N" is a connection this process
inherited on descriptor N (connected by another process).

Usage: agent_register.py SOCKET APP_ID [--repeat]
"""
import json
import socket
import sys


def register(path, app_id):
    inherited = path.startswith("fd:")
    with socket.socket(fileno=int(path[3:])) if inherited else socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(10)
        if not inherited:
            s.connect(path)
        s.sendall(json.dumps({"method": "io.proctor.Agent.Register", "parameters": {"appId": app_id}}).encode() + b"\0")
        data = b""
        while not data.endswith(b"\0"):
            chunk = s.recv(65536)
            if not chunk:
                return "connection closed"
            data += chunk
    reply = json.loads(data[:-1])
    return reply.get("error") or "registered"


def main():
    path, app_id = sys.argv[1], sys.argv[2]
    print(register(path, app_id), flush=True)
    if "--repeat" in sys.argv[3:]:
        for _ in sys.stdin:
            print(register(path, app_id), flush=True)


if __name__ == "__main__":
    main()
