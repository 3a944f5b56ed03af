"""One Varlink call on an open socket with nothing but the standard library: independent of
every client, and importable by helper scripts that run as other users (no pytest)."""
import json


def exchange(sock, method, parameters=None, more=False, oneway=False):
    """Sends one call on the connected `sock`; returns its (first) reply, None for oneway."""
    message = {"method": method}
    if parameters is not None:
        message["parameters"] = parameters
    if more:
        message["more"] = True
    if oneway:
        message["oneway"] = True
    sock.sendall(json.dumps(message).encode() + b"\0")
    if oneway:
        return None
    data = b""
    while not data.endswith(b"\0"):
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    return json.loads(data.rstrip(b"\0").split(b"\0")[0])
