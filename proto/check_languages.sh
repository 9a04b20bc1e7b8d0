#!/usr/bin/env bash
# Does proto/arena/v1/arena.proto compile for the languages a bot may be written in?
#
#     bash proto/check_languages.sh          # one line per target: ok, FAIL (with protoc's
#                                            # message) or MISSING (with the Debian package)
#     bash proto/check_languages.sh DIR      # the same for DIR/arena/v1/arena.proto
#     bash proto/check_languages.sh --tools  # the tools it needs: "program debian-package" lines
#
# Uses Debian's protoc and plugins (.ci/apt-packages installs them in CI): the messages for
# C++, Java, Python, Ruby, C#, PHP and Objective-C (protoc's own generators), Go
# (protoc-gen-go, protoc-gen-go-grpc), and the gRPC services for C++, Java, Python, Ruby, PHP
# and Go. Everything is generated into a temporary directory and thrown away: this only checks
# that every generator accepts the file and its language options (go_package and the others).
# Exit status 0 when every target compiled, 1 when one failed or a tool is missing.
set -uo pipefail

ROOT=$(dirname "${BASH_SOURCE[0]}")  # proto/: the include root, so the file is arena/v1/arena.proto
PROTO=arena/v1/arena.proto

# program, Debian package
TOOLS=(
    "protoc protobuf-compiler"
    "grpc_cpp_plugin protobuf-compiler-grpc"
    "grpc_python_plugin protobuf-compiler-grpc"
    "grpc_ruby_plugin protobuf-compiler-grpc"
    "grpc_php_plugin protobuf-compiler-grpc"
    "grpc_java_plugin protobuf-compiler-grpc-java-plugin"
    "protoc-gen-go protoc-gen-go"
    "protoc-gen-go-grpc protoc-gen-go-grpc"
)

if [ "${1:-}" = "--tools" ]; then
    printf '%s\n' "${TOOLS[@]}"
    exit 0
fi
cd "${1:-$ROOT}" || exit 1
if [ ! -f "$PROTO" ]; then
    echo "no $PROTO in $(pwd)" >&2
    exit 1
fi

missing=()
for entry in "${TOOLS[@]}"; do
    read -r program package <<<"$entry"
    command -v "$program" >/dev/null || missing+=("$program (apt-get install $package)")
done

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
failed=()

# target name, then protoc's output options (each target writes into a directory of its own)
target() {
    local name=$1 dir="$out/$1"
    shift
    mkdir -p "$dir"
    local args=("${@//@OUT@/$dir}")
    if protoc -I. "${args[@]}" "$PROTO" >"$dir.log" 2>&1 && [ -n "$(find "$dir" -type f -print -quit)" ]; then
        echo "ok       $name"
    else
        echo "FAIL     $name: protoc ${args[*]} $PROTO"
        sed 's/^/           /' "$dir.log"
        failed+=("$name")
    fi
}

needs() {  # the target's programs are all present
    local program
    for program in "$@"; do
        command -v "$program" >/dev/null || return 1
    done
}

if needs protoc; then
    target cpp --cpp_out=@OUT@
    target java --java_out=@OUT@
    target python --python_out=@OUT@ --pyi_out=@OUT@
    target ruby --ruby_out=@OUT@
    target csharp --csharp_out=@OUT@
    target php --php_out=@OUT@
    target objc --objc_out=@OUT@
    for language in cpp python ruby php java; do
        if needs "grpc_${language}_plugin"; then
            target "$language-grpc" "--plugin=protoc-gen-grpc=$(command -v "grpc_${language}_plugin")" --grpc_out=@OUT@
        fi
    done
    if needs protoc-gen-go; then
        target go --go_out=@OUT@ --go_opt=paths=source_relative
    fi
    if needs protoc-gen-go protoc-gen-go-grpc; then
        target go-grpc --go-grpc_out=@OUT@ --go-grpc_opt=paths=source_relative
    fi
fi

for tool in "${missing[@]}"; do
    echo "MISSING  $tool"
done
if [ ${#failed[@]} -gt 0 ]; then
    echo "arena.proto does not compile for: ${failed[*]}" >&2
fi
if [ ${#missing[@]} -gt 0 ]; then
    echo "not checked: ${#missing[@]} tools missing (install them from .ci/apt-packages)" >&2
fi
if [ ${#failed[@]} -gt 0 ] || [ ${#missing[@]} -gt 0 ]; then
    exit 1
fi
echo "arena.proto compiles for every target"
