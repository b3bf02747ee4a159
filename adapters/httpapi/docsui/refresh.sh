#!/usr/bin/env bash
# Refreshes scalar-standalone.js, the renderer GET /docs embeds, from the npm registry: change
# the version in package.json, run this, commit package.json, package-lock.json and the bundle.
# Nothing is fetched at run time; the page turns off Scalar's web fonts and telemetry (docs.go).
set -euo pipefail
cd "$(dirname "$0")"
npm install --ignore-scripts --no-audit --no-fund
cp node_modules/@scalar/api-reference/dist/browser/standalone.js scalar-standalone.js
sed -i '/^\/\/# sourceMappingURL=/d' scalar-standalone.js
rm -rf node_modules
if grep -q 'fonts.googleapis\|cdn.jsdelivr' scalar-standalone.js; then
  echo "note: the bundle names a CDN; check that docs.go's configuration keeps it from being used" >&2
fi
