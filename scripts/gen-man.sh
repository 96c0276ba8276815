#!/bin/sh
# gen-man.sh — man pages from the program's own help text, so they cannot drift from it:
# wfbridge.1 from `wfbridge --help` and wfbridge-VERB.1 from `wfbridge VERB --help`, for
# every verb `wfbridge --help` lists. Usage: gen-man.sh WFBRIDGE OUTDIR VERSION
set -eu
exe=$1
out=$2
version=$3
mkdir -p "$out"

# The help text as a roff page: usage lines become the synopsis, the rest stays as written
# (no fill), with roff's special characters escaped.
page() { # NAME SUMMARY: reads the help text on stdin
    printf '.TH %s 1 "" "wfbridge %s" "wfbridge manual"\n' \
        "$(echo "$1" | tr 'a-z' 'A-Z')" "$version"
    printf '.SH NAME\n%s \\- %s\n' "$1" "$2"
    awk '
        function esc(s) { gsub(/\\/, "\\e", s); gsub(/-/, "\\-", s); return s }
        BEGIN { section = "SYNOPSIS"; print ".SH SYNOPSIS"; print ".nf" }
        section == "SYNOPSIS" && $0 == "" { section = "DESCRIPTION"; print ".fi";
                                            print ".SH DESCRIPTION"; print ".nf"; next }
        { line = esc($0); if (line ~ /^[.'\'']/) line = "\\&" line; print line }
        END { print ".fi"; print ".SH SEE ALSO"; print "wfbridge(1); the documentation in" \
              " share/doc/wfbridge (formats.md, durability.md, convert.md, verify.md)." }'
}

"$exe" --help | page wfbridge "legacy-to-modern workflow toolkit" > "$out/wfbridge.1"
"$exe" --help | awk '/^verbs:/ { on = 1; next } on && NF == 0 { exit }
                      on { verb = $1; $1 = ""; sub(/^ +/, ""); print verb "\t" $0 }' |
while IFS='	' read -r verb summary; do
    "$exe" "$verb" --help | page "wfbridge-$verb" "$summary" > "$out/wfbridge-$verb.1"
done
