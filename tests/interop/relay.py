#!/usr/bin/env python3
"""A TCP relay whose outgoing connections leave from a given loopback address, so that a peer
on this machine reaches a server as if from another host (the server sees that address).

    relay.py <listen-port> <upstream-port> <source-ip>

Listens on 127.0.0.1:<listen-port>, connects each accepted connection to
127.0.0.1:<upstream-port> from <source-ip> (any 127.x.y.z works on Linux loopback) and copies
bytes both ways until either side closes. Runs until killed."""
import socket
import sys
import threading

from wiretap import pump  # the same byte copy, without recording


def main():
    listen_port, upstream_port, source = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", listen_port))
    server.listen(64)
    while True:
        client, _ = server.accept()
        try:
            upstream = socket.create_connection(("127.0.0.1", upstream_port),
                                                source_address=(source, 0))
        except OSError:
            client.close()
            continue
        threading.Thread(target=pump, args=(client, upstream), daemon=True).start()
        threading.Thread(target=pump, args=(upstream, client), daemon=True).start()


if __name__ == "__main__":
    main()
