#!/usr/bin/env bash
# Builds the Go bot (clients/go/main.go) from Debian's packages, offline: generates the protocol's
# Go code from proto/arena/v1/arena.proto, then compiles in GOPATH mode against /usr/share/gocode.
#
#     bash clients/go/build.sh [OUT]    # writes OUT/arena_go_bot (OUT: clients/go/build)
#
# Debian 12 (docs/PROTOCOL.md, section 1):
#     apt-get install protobuf-compiler protoc-gen-go protoc-gen-go-grpc golang-go \
#         golang-google-grpc-dev golang-google-protobuf-dev golang-github-golang-protobuf-1-5-dev
# Name golang-github-golang-protobuf-1-5-dev: golang-google-grpc-dev accepts the 1.3 package too, and
# apt picks that one, with which the bot compiles, then panics at its first Send.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
mkdir -p "${1:-$here/build}"
out=$(cd "${1:-$here/build}" && pwd)

for program in protoc protoc-gen-go protoc-gen-go-grpc go; do
    command -v "$program" >/dev/null || { echo "build.sh: $program not found (see the apt-get line above)" >&2; exit 1; }
done

# GOPATH mode: the generated package sits at its go_package path under $gopath/src, the bot
# beside it, and Debian's libraries come from /usr/share/gocode. No go.mod, no network.
gopath="$out/gopath"
rm -rf "$gopath"
mkdir -p "$gopath/src/arena_go_bot"
protoc -I "$root/proto" --go_out="$gopath/src" --go-grpc_out="$gopath/src" arena/v1/arena.proto
cp "$here/main.go" "$gopath/src/arena_go_bot/"
if [ -z "${GOCACHE:-}" ] && [ -z "${HOME:-}" ] && [ -z "${XDG_CACHE_HOME:-}" ]; then
    export GOCACHE="$out/go-cache"  # go needs a build cache somewhere
fi
cd "$gopath/src/arena_go_bot"
GO111MODULE=off GOPATH="$gopath:/usr/share/gocode" go build -o "$out/arena_go_bot" .
echo "$out/arena_go_bot"
