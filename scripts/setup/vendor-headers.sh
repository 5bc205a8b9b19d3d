#!/usr/bin/env bash
# Copies the header-only dependencies (CLI11, nlohmann_json, fmt, toml++, gloo's headers) and the image decoders
# (libjpeg-turbo's TurboJPEG, libpng and zlib, as static libraries with their headers) from this Debian
# machine's packages into one folder, so trainbench builds where they are not installed and nothing
# can be downloaded (scripts/checks/gpu-check.sh; cmake -DTRAINBENCH_THIRD_PARTY=FOLDER). fmt and toml++ are
# then compiled header-only. About 5 MB; the folder is git-ignored and carried next to the checkout.
#
#   scripts/setup/vendor-headers.sh [FOLDER]     (default: third_party/ in the repository root)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
dest=${1:-$root/third_party}

# gloo: the headers that LibTorch's c10d headers include (ProcessGroupGloo.hpp) and that a pip torch
# does not ship; Debian's libgloo-dev has them.
declare -A pkg_of=([CLI]=libcli11-dev [nlohmann]=nlohmann-json3-dev [fmt]=libfmt-dev [toml++]=libtomlplusplus-dev
                   [gloo]=libgloo-dev)
for dir in "${!pkg_of[@]}"; do
  if [[ ! -d /usr/include/$dir ]]; then
    echo "vendor-headers: error: /usr/include/$dir is missing (install ${pkg_of[$dir]}: scripts/setup/setup-deps.sh)" >&2
    exit 2
  fi
done

rm -rf "$dest"
mkdir -p "$dest/include" "$dest/licenses"
{
  echo "# Header-only dependencies copied by scripts/setup/vendor-headers.sh on $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  for dir in CLI nlohmann fmt toml++ gloo; do
    pkg=${pkg_of[$dir]}
    cp -r "/usr/include/$dir" "$dest/include/"
    version=$(dpkg-query -W -f='${Version}' "$pkg" 2>/dev/null || echo unknown)
    echo "$dir $pkg $version"
    [[ -f /usr/share/doc/$pkg/copyright ]] && cp "/usr/share/doc/$pkg/copyright" "$dest/licenses/$pkg.copyright"
  done
  # The image decoders and SQLite (the results store), as static libraries with their headers (about
  # 3 MB): a machine without libturbojpeg0-dev, libpng-dev and libsqlite3-dev (the GPU machine) then
  # builds --data on image folders and the store too (PostgreSQL stores need libpq: not carried).
  mkdir -p "$dest/lib"
  multiarch=/usr/lib/$(gcc -print-multiarch 2> /dev/null || echo x86_64-linux-gnu)
  for entry in libturbojpeg0-dev:turbojpeg.h:libturbojpeg.a libpng-dev:png.h,pngconf.h,pnglibconf.h:libpng16.a \
               zlib1g-dev:zlib.h,zconf.h:libz.a libsqlite3-dev:sqlite3.h,sqlite3ext.h:libsqlite3.a; do
    IFS=: read -r pkg headers lib <<< "$entry"
    for h in ${headers//,/ }; do cp "/usr/include/$h" "$dest/include/"; done
    cp "$multiarch/$lib" "$dest/lib/"
    echo "$lib $pkg $(dpkg-query -W -f='${Version}' "$pkg" 2> /dev/null || echo unknown)"
    [[ -f /usr/share/doc/$pkg/copyright ]] && cp "/usr/share/doc/$pkg/copyright" "$dest/licenses/$pkg.copyright"
  done
} > "$dest/VERSIONS"
echo "vendor-headers: $(du -sh "$dest" | cut -f1) in $dest"
