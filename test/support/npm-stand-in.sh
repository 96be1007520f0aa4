# The `npm` of a guide walk's session (test/support/npm-stand-in.ts writes the PGW_NPM_* variables
# before this file and explains why). `npm start` and `npm run [-s] NAME [-- ARGS…]` of a script of
# the package, once that script has run through the real npm in this test file, run as npm runs them;
# anything else, and npm anywhere but in the package's folder, is the real npm.
npm() {
  local silent='' name='' first=2
  if [[ $# -eq 1 && $1 == start ]]; then
    name=start
  elif [[ $# -ge 2 && $1 == run ]]; then
    if [[ $2 == -s || $2 == --silent ]]; then
      silent=1
      first=3
    fi
    name=${!first-}
    first=$((first + 1))
    if (($# >= first)); then
      # Arguments after the name without `--`: npm reads some as its own options.
      if [[ ${!first} == -- ]]; then first=$((first + 1)); else name=''; fi
    fi
  fi
  # npm runs the scripts of the package.json it finds from the current folder up: this package's, here.
  if [[ $PWD != "$PGW_NPM_ROOT" || -z $name || $name == -* || $name == */* || -z ${PGW_NPM_SCRIPTS[$name]+set} ]] ||
    [[ -n ${PGW_NPM_SCRIPTS[pre$name]+set} || -n ${PGW_NPM_SCRIPTS[post$name]+set} ]] ||
    mkdir "$PGW_NPM_ONCE/$name" 2> /dev/null; then
    command npm "$@"
    return
  fi
  # As npm: each argument appended to the script's line, quoted for sh; the banner (on stdout, unless
  # silent) shows them as given.
  local line=${PGW_NPM_SCRIPTS[$name]} quoted='' shown='' arg q="'"
  for arg in "${@:first}"; do
    quoted+=" '${arg//$q/$q\\$q$q}'"
    shown+=" $arg"
  done
  [[ ${npm_config_loglevel-} != silent ]] || silent=1
  [[ -n $silent ]] || printf '\n> %s %s\n> %s\n\n' "$PGW_NPM_ID" "$name" "$line$shown"
  (
    export INIT_CWD="$PWD" PATH="$PGW_NPM_PATH_BEFORE$PATH" npm_lifecycle_event="$name" npm_lifecycle_script="$line"
    ((${#PGW_NPM_VARS[@]} == 0)) || export "${PGW_NPM_VARS[@]}"
    [[ -z $silent ]] || export npm_config_loglevel=silent
    exec sh -c "$line$quoted"
  )
}
