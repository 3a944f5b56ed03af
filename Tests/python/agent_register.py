"""A managed app's first call, with nothing but the standard library, for tests that run it
as another program, user or mount namespace: registers as APP_ID on the Agent socket SOCKET
and prints the outcome ("registered" or the Varlink error's name) on one line. With
--data-key it then asks, on the same connection, for the app's data key and prints the
reply's parameters as one JSON line (or the error's name). With --repeat it then registers
again, on a fresh connection, each time a line arrives on standard input, until standard
input ends. SOCKET "fd:N" is a connection this process inherited on descriptor N (connected
by another process).

Usage: agent_register.py SOCKET APP_ID [--data-key] [--repeat]
"""
import json
import socket
import sys


def call(s, method, parameters):
    s.sendall(json.dumps({"method": method, "parameters": parameters}).encode() + b"\0")
    data = b""
    while not data.endswith(b"\0"):
        chunk = s.recv(65536)
        if not chunk:
            return {"error": "connection closed"}
        data += chunk
    return json.loads(data[:-1])


def register(path, app_id, data_key=False):
    inherited = path.startswith("fd:")
    with socket.socket(fileno=int(path[3:])) if inherited else socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(10)
        if not inherited:
            s.connect(path)
        reply = call(s, "io.proctor.Agent.Register", {"appId": app_id})
        lines = [reply.get("error") or "registered"]
        if data_key and "error" not in reply:
            key = call(s, "io.proctor.Agent.GetDataKey", {"session": reply["parameters"]["session"]})
            lines.append(key.get("error") or json.dumps(key["parameters"]))
    return "\n".join(lines)


def main():
    path, app_id = sys.argv[1], sys.argv[2]
    data_key = "--data-key" in sys.argv[3:]
    print(register(path, app_id, data_key), flush=True)
    if "--repeat" in sys.argv[3:]:
        for _ in sys.stdin:
            print(register(path, app_id, data_key), flush=True)


if __name__ == "__main__":
    main()
