#!/usr/bin/env bash
# Fetch the web assets Great Expectations' Data Docs load from CDNs, from the npm registry,
# into hbase_migrate/validate/docs_assets/ (git-ignored), so the Data Docs the validation
# step writes render offline (hbase_migrate/validate/docs.py rewrites the links).
# Usage: scripts/docs-assets.sh [DEST]
set -euo pipefail
dest=${1:-hbase_migrate/validate/docs_assets}
packages=(
    bootstrap@4.3.1
    bootstrap-table@1.19.1
    jquery@3.7.1
    popper.js@1.12.9
    @fortawesome/fontawesome-free@6.6.0
    bootstrap-datepicker@1.9.0
    vega@5.33.1
    vega-lite@5.23.0
    vega-embed@6.29.0
    @forevolve/bootstrap-dark@1.1.0
)
if [[ -f "$dest/.complete" ]] && [[ "$(cat "$dest/.complete")" == "${packages[*]}" ]]; then
    exit 0
fi
command -v npm >/dev/null || { echo "docs-assets: npm is required (apt-get install -y npm)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
rm -rf "$dest"
mkdir -p "$dest"
for spec in "${packages[@]}"; do
    name=${spec%@*}
    tarball=$(cd "$work" && npm pack --silent "$spec" 2>/dev/null | tail -1)
    mkdir -p "$dest/$name"
    tar -xzf "$work/$tarball" -C "$dest/$name" --strip-components=1
done
echo "${packages[*]}" > "$dest/.complete"
echo "docs-assets: ${#packages[@]} packages in $dest"
