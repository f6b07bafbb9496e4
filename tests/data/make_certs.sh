#!/usr/bin/env bash
# make_certs.sh DIR: a throw-away test PKI made with the openssl command, for the TLS unit,
# integration and interop tests. Nothing it writes is ever committed: every test makes its own
# into a temporary or build directory.
#
#   ca.pem, ca.key               "mqnamesrv test CA"
#   server.pem, server.key       CN=localhost, SAN DNS:localhost, IP:127.0.0.1 (RSA 2048), from ca
#   server2.pem, server2.key     the same names, another key and CN=localhost-rotated (rotation)
#   server-enc.key               server.key as encrypted PKCS#8 (AES-256), password "s3cret"
#   other.pem                    server.pem's chain with another host name (CN=elsewhere only)
#   client.pem, client.key       CN=test-client, clientAuth, from ca (EC P-256)
#   rogue-ca.pem, rogue.pem, rogue.key   a client certificate from a CA nobody trusts
#   *.pk8                        the keys above as unencrypted PKCS#8 (what Java's Netty reads)
set -euo pipefail
dir=${1:?usage: make_certs.sh DIR}
mkdir -p "$dir"
cd "$dir"
days=3650

ossl() {
    openssl "$@" 2>/dev/null
}

ca() { # ca NAME CN
    ossl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$1.key" \
        -out "$1.pem" -days $days -subj "/CN=$2" \
        -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign
}

issue() { # issue NAME CN SAN EKU CA KEYSPEC
    local name=$1 cn=$2 san=$3 eku=$4 ca=$5
    shift 5
    ossl req -new -newkey "$@" -nodes -keyout "$name.key" -out "$name.csr" -subj "/CN=$cn"
    local ext
    ext=$(mktemp)
    {
        [[ -n $san ]] && echo "subjectAltName=$san"
        echo "extendedKeyUsage=$eku"
        echo "basicConstraints=CA:FALSE"
    } >"$ext"
    ossl x509 -req -in "$name.csr" -CA "$ca.pem" -CAkey "$ca.key" -CAcreateserial \
        -out "$name.pem" -days $days -extfile "$ext"
    rm -f "$ext" "$name.csr"
    ossl pkcs8 -topk8 -nocrypt -in "$name.key" -out "$name.pk8"
}

ca ca "mqnamesrv test CA"
ca rogue-ca "rogue test CA"
issue server localhost "DNS:localhost,IP:127.0.0.1" serverAuth ca rsa:2048
issue server2 localhost-rotated "DNS:localhost,IP:127.0.0.1" serverAuth ca ec -pkeyopt ec_paramgen_curve:P-256
issue other elsewhere "DNS:elsewhere.example" serverAuth ca ec -pkeyopt ec_paramgen_curve:P-256
issue client test-client "" clientAuth ca ec -pkeyopt ec_paramgen_curve:P-256
issue rogue rogue-client "" clientAuth rogue-ca ec -pkeyopt ec_paramgen_curve:P-256
ossl pkcs8 -topk8 -in server.key -out server-enc.key -v2 aes-256-cbc -passout pass:s3cret
chmod 600 ./*.key ./*.pk8
