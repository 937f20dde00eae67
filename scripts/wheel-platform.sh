#!/bin/sh
# wheel-platform.sh: the platform tag of a wheel that carries the ELF files given,
# as PEP 600 defines it: manylinux_2_N_ARCH, where glibc 2.N is the oldest that
# has every symbol version the files need.
#
#   sh scripts/wheel-platform.sh FILE...      (make wheel and tests/wheel/check.sh)
#
# Prints the tag.  Exits 1 with a line on stderr where a file is not an ELF file
# of x86-64 or aarch64, needs a library outside glibc's own and libgcc_s (which
# every manylinux system has), or a symbol version other than glibc's: this
# script judges no other, so it gives no tag then.
set -eu
[ $# -gt 0 ] || { echo "usage: wheel-platform.sh FILE..." >&2; exit 2; }
need=0 arch=
for f in "$@"; do
    head=$(objdump -f "$f" 2>/dev/null) || { echo "wheel-platform: $f: not an ELF file" >&2; exit 1; }
    case $head in
    *"architecture: i386:x86-64"*) a=x86_64 ;;
    *"architecture: aarch64"*) a=aarch64 ;;
    *) echo "wheel-platform: $f: neither x86-64 nor aarch64" >&2; exit 1 ;;
    esac
    [ -z "$arch" ] || [ "$arch" = "$a" ] || { echo "wheel-platform: $f: $a, the others $arch" >&2; exit 1; }
    arch=$a
    for lib in $(objdump -p "$f" | awk '$1 == "NEEDED" { print $2 }'); do
        case $lib in
        libc.so.6 | libm.so.6 | libdl.so.2 | libpthread.so.0 | librt.so.1 | libgcc_s.so.1 | ld-linux-*.so.*) ;;
        *) echo "wheel-platform: $f needs $lib, outside glibc and libgcc_s" >&2; exit 1 ;;
        esac
    done
    # The version references: "0x0d696914 0x00 03 GLIBC_2.34" under "required from".
    for v in $(objdump -p "$f" | sed -n '/^Version References:/,/^$/p' | awk 'NF == 4 { print $4 }'); do
        case $v in
        GLIBC_2.*) n=${v#GLIBC_2.} n=${n%%.*} ;;
        *) echo "wheel-platform: $f needs symbol version $v: only glibc's are judged here" >&2; exit 1 ;;
        esac
        [ "$n" -le "$need" ] || need=$n
    done
done
# The oldest glibc pip knows for the architecture (x86-64 2.5, aarch64 2.17): a
# file that needs only older versions gets that one's tag.
case $arch in x86_64) floor=5 ;; *) floor=17 ;; esac
[ "$need" -ge "$floor" ] || need=$floor
echo "manylinux_2_${need}_$arch"
