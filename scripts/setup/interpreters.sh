#!/usr/bin/env bash
# The interpreters the examples in examples/php, examples/python and examples/ruby and the docs'
# samples (test/docs/samples-languages.test.ts) run on, from Debian's packages when the machine lacks
# them (as scripts/postgres/ensure.sh does for PostgreSQL): PHP with curl and SimpleXML (php-cli
# php-curl php-xml), Ruby with net/http and REXML (ruby: on Debian 12's Ruby 3.1 REXML is a bundled
# gem inside libruby3.1, there is no ruby-rexml package), Python 3 (xml.etree and urllib are in its
# standard library), and C#: Mono's compiler mcs (mono-mcs, which depends on mono-runtime, so `mono`
# and the base library with HttpWebRequest and the hashes come with it). Installed once, before the tests, so no
# test's time limit runs while apt works; waits for dpkg's lock rather than failing on it.
#
# Prints one line per language on stdout: `php: ok`, or `php: missing (why)`. Exits 0 either way:
# a machine where they cannot be installed runs the tests, which skip those languages saying why
# (test/examples/interpreters.ts asks the interpreters themselves).
set -uo pipefail
# shellcheck source=scripts/setup/debian.sh
source "$(dirname "$0")/debian.sh"

# Each language: the check that it runs with what the examples need, and the packages that bring it.
php_ok() { php -r 'exit(function_exists("curl_init") && class_exists("SimpleXMLElement") ? 0 : 1);' 2>/dev/null; }
ruby_ok() { ruby -e 'require "net/http"; require "rexml/document"; require "digest/md5"' 2>/dev/null; }
python_ok() { python3 -c 'import urllib.request, xml.etree.ElementTree, hashlib' 2>/dev/null; }
csharp_ok() { mcs --version >/dev/null 2>&1 && mono --version >/dev/null 2>&1; }
declare -A packages=([php]="php-cli php-curl php-xml" [ruby]="ruby" [python]="python3" [csharp]="mono-mcs")

missing=()
for lang in php ruby python csharp; do "${lang}_ok" || missing+=("$lang"); done

if ((${#missing[@]})); then
  # shellcheck disable=SC2046
  debian_install interpreters "${missing[*]}" $(for lang in "${missing[@]}"; do echo "${packages[$lang]}"; done)
fi

for lang in php ruby python csharp; do
  if "${lang}_ok"; then echo "$lang: ok"; else echo "$lang: missing (packages: ${packages[$lang]})"; fi
done
