#!/usr/bin/env bash
# Pack the imported real lines (`ocrkit data prepare configs/data/sources.yaml --out data/real`) into the
# Parquet shards configs/recognizer/burst.yaml reads: one folder per kind of document, a seeded sample
# each, lines re-encoded 32 px tall as WebP (the height the model reads), ~20 MB in all so that the tree
# a lent GPU machine sees stays under its size limit. Usage: bash tools/pack_recognizer_burst.sh [SCALE]
# (SCALE multiplies every sample size; default 1).
set -euo pipefail
cd "$(dirname "$0")/.."
L=data/real/lines; B=data/burst; SCALE=${1:-1}
group() {  # group NAME LIMIT SUBSET...
  local name=$1 limit=$2; shift 2
  local files=(); for s in "$@"; do files+=("$L/${s}_train.jsonl"); done
  cat "${files[@]}" > "$L/group_${name}_train.jsonl"
  rm -rf "$B/$name"
  ocrkit data pack "$L/group_${name}_train.jsonl" --out "$B/$name" --line-height 32 --codec .webp \
    --limit "$(python3 -c "print(int($limit * $SCALE))")"
}
group receipts 3000 receipts_sroie
group typewritten 2500 typewritten_ehri
group books 3500 books_vd_sbb books_dta lines_dta_bag lines_archiscribe
group print 6000 books_gallic16 books_gallic17 books_gallic18 lines_ocr17 books_fondue_art books_expositions
group handwritten 5000 handwritten_copiste handwritten_poilus handwritten_timeus handwritten_htromance \
  handwritten_cremma17 handwritten_peraire
find "$L" -maxdepth 1 -name '*_val.jsonl' ! -name 'group_*' | sort | xargs cat > "$L/group_val.jsonl"
rm -rf "$B/val"
ocrkit data pack "$L/group_val.jsonl" --out "$B/val" --line-height 32 --codec .webp --limit 600
du -sh "$B"
