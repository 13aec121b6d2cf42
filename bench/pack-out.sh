#!/bin/sh
# Packs every file under a device run's output folder into one archive,
# DIR/all.tgz, and removes the rest: the device tool returns at most 8 files
# a call (/work/.library/device/README.md there), so a run that writes more
# loses all but 8 of them. The run scripts here call it at their end when
# PACK=1:  PACK=1 OUT=$OUT sh bench/run-random.sh   (then: tar xzf all.tgz)
#   sh bench/pack-out.sh DIR
set -u
dir=${1:?usage: sh bench/pack-out.sh DIR}
tmp=$(mktemp /tmp/pack-out.XXXXXX)
(cd "$dir" && tar czf "$tmp" --exclude=all.tgz . && find . -type f ! -name all.tgz -delete &&
    find . -mindepth 1 -type d -empty -delete) || { rm -f "$tmp"; exit 1; }
mv "$tmp" "$dir/all.tgz"
echo "pack-out.sh: $(tar tzf "$dir/all.tgz" | grep -vc '/$') files in $dir/all.tgz"
