//! The registry of diagnostic codes: every code the compiler can emit, with a
//! one-line title and the long text printed by `sclc explain CODE`.
//! A test checks that every code used in the sources is registered here.

/// One registered code.
#[derive(Debug)]
pub struct Code {
    /// `E####` or `W####`.
    pub code: &'static str,
    /// A short title.
    pub title: &'static str,
    /// The long explanation: what it means, an example, the fix.
    pub explanation: &'static str,
}

macro_rules! codes {
    ($( $code:literal, $title:literal, $text:literal; )*) => {
        /// Every registered code, in order.
        pub const CODES: &[Code] = &[ $( Code { code: $code, title: $title, explanation: $text } ),* ];
    };
}

/// Finds a code (case-insensitive).
pub fn lookup(code: &str) -> Option<&'static Code> {
    CODES.iter().find(|c| c.code.eq_ignore_ascii_case(code))
}

/// The full `sclc explain` text of a code, or `None` if it is unknown.
pub fn explain(code: &str) -> Option<String> {
    lookup(code).map(|c| format!("{}: {}\n\n{}\n", c.code, c.title, c.explanation.trim()))
}

codes! {
"E0001", "syntax error",
"The parser expected something else at this point. The message says what it found and what it expected.

Example:
    env app {
      base image(\"debian:12.5\")
    }

Fix: add the missing token (here the `=`). The parser recovers at the next item, so later errors are real; a declaration with a syntax error is still read (its name is known), and nothing more is reported about it.";

"E0002", "unterminated string",
"A string literal was not closed before the end of the line (for `\"...\"`) or the end of the file (for `\"\"\"...\"\"\"`).

Example:
    base = image(\"debian:12.5)

Fix: close the string with `\"`. Use `\"\"\"` for strings that span lines.";

"E0003", "bad interpolation",
"`${` starts an interpolation that must hold one expression and end with `}`.

Example:
    command = [\"--port=${}\"]

Fix: put an expression between `${` and `}`, or write `\\$` for a literal dollar sign.";

"E0004", "unknown escape",
"Strings know the escapes `\\n \\t \\\" \\\\ \\$`; any other backslash escape is an error.

Example:
    vars { P = \"C:\\temp\" }

Fix: write `\\\\` for a backslash.";

"E0005", "bad number or quantity",
"A number has a suffix that is not a quantity unit, or a malformed exponent. Quantity suffixes are `Ki Mi Gi Ti Pi Ei` (binary), `k M G T P E` (decimal) and `m` (milli).

Example:
    memory = 4GB

Fix: write `4Gi` (binary, 4×2^30 bytes) or `4G` (decimal).";

"E0006", "unclosed delimiter",
"A `(`, `[` or `{` was opened and never closed.

Fix: add the closing delimiter; the label shows where the opening one is.";

"E0007", "nested too deeply",
"Brackets (`(`, `[`, `{`, `${`) and `if` constructs (`if … then … else` expressions, `else if` chains of items) nest at most 256 levels deep. The compiler works through nesting one level at a time, so the limit bounds the memory every stage needs, whatever the input. Chains of one operator (`a + b + c + …`), of calls, field accesses and indexes (`f(x).y[0]…`) and of `with` blocks are not nesting and have no limit.

Example:
    let size = if a then 1 else if b then 2 else if c then 3 …   // 300 cases

Fix: split the expression with `let` declarations, or replace a long `if`/`else if` chain by a map lookup (`sizes[name]`).";

"E0008", "too many diagnostics",
"A file has more than 100 diagnostics. Only the first 100 (by position) are shown, in every front end; this one says how many more there are, and how many of them are errors.

Fix: fix the diagnostics shown first. In a file with that many, most of the later ones are usually consequences of the first (a missing bracket, a broken declaration), and disappear with them.";

"E0009", "file too large",
"A source module or a file read with `file()` is larger than 16 MiB. The compiler reads at most that much of any file (one byte more, to tell), so a huge or endless file costs no more than the limit in time and memory.

Fix: split a large module into several, and keep large data (weights, datasets, generated lists) out of the build description: mount it as a volume or fetch it as an asset.";

"E0010", "invisible character",
"The source holds a character that a reader does not see as written, or that a terminal or editor acts on: a control character other than tab and line feed (an escape, a lone carriage return, a form feed, NUL), a line or paragraph separator (U+0085, U+2028, U+2029), a zero-width no-break space after the start of the file (U+FEFF), an invisible format or filler character (a zero-width space U+200B, a soft hyphen U+00AD, U+2060–U+2064, the Hangul fillers, the tag characters U+E0000–U+E0FFF, …; not the zero-width joiners U+200C/U+200D, which scripts and emoji need), or a bidirectional formatting character (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069). The last kind can make code display in another order than the compiler reads it (\"Trojan Source\", CVE-2021-42574), in strings and in comments alike. The carriage return of a CRLF line end and a byte order mark at the start of the file are fine.

Fix: delete the character. In a string, write `\\n` for a line break and `\\t` for a tab; the targets cannot carry the other characters in their files.";

"E0011", "too many syntax errors",
"More than 1000 syntax errors were found in one file (the lexer's and the parser's together), and the compiler stopped reading the file there: the rest of the file is not checked. A file with that many is usually not SCL source at all (a binary, a file in another encoding, a file pasted into the wrong place), and every further diagnostic would only cost time and memory.

Fix: fix the first errors, or check that the file is the one you meant.";

"E0101", "unknown name",
"A name is not declared in this scope. Names resolve to comprehension variables, template or function arguments, then the module's `let`, `param`, `fn`, `enum`, `env` and import names. Fields of the env being defined are not names (use `self.field`).

Example:
    param gpu_count: Int = 1
    env e { resources.requests.gpu = { count = gpu_cuont } }

Fix: use the suggested name, or declare it.";

"E0102", "unknown import",
"The imported module does not exist: a relative path (resolved against the importing file) that is not a file, or a `std/NAME` that the standard library does not have.

Example:
    import \"./bsae.env.scl\" as base

Fix: correct the path; `sclc` lists the std modules it knows in the help.";

"E0103", "import cycle",
"Modules import each other in a cycle; the message shows the cycle. Modules form a tree (a DAG), so that evaluation always ends.

Fix: move what both need into a third module that both import.";

"E0104", "name declared twice",
"A module declares the same name twice (two envs, a `let` and a `param`, ...). Every top-level name must be unique in its module.

Example:
    env twice { ... }
    env twice { ... }

Fix: rename or remove one of them.";

"E0105", "outside the workspace",
"An `import` or a `file(...)` names a path outside the workspace root. The root is the nearest ancestor folder holding `scl.toml`, else the folder of the file named on the command line. Builds are hermetic: only files inside the workspace can be read.

Fix: move the file into the workspace, or add an `scl.toml` in a common ancestor folder.";

"E0106", "unknown module member",
"A module has no top-level declaration with this name.

Example:
    env e extends base.pythn_env { }

Fix: use the suggested name; `let`, `param`, `fn`, `enum` and `env` declarations are visible to importers.";

"E0107", "file cannot be read",
"A file exists but the system refuses to read it: a module named on the command line or by an `import`, or a file named by `file(...)`. The message gives the system's reason (no permission, an I/O error). The file is never taken for an empty one.

Fix: make the file readable by the user who runs `sclc` (`chmod u+r FILE`), or remove it.";

"E0201", "type mismatch",
"A value does not have the type the field, argument or parameter expects.

Example:
    ports = [8080, \"http\"]      // ports is [Int]

Fix: give a value of the expected type, shown in the message.";

"E0202", "unknown field",
"The Env schema (or the record type) has no field with this name. The help suggests the closest field.

Example:
    resources.requests { memroy = 4Gi }

Fix: use the suggested field name; `sclc explain E0202` lists nothing more, see the book's Env schema for every field.";

"E0203", "bad or missing unit",
"A quantity has no unit or the wrong kind of unit. `Memory` needs a byte suffix (`Ki Mi Gi Ti Pi Ei` or decimal `k M G T P E`) and must come out as a whole number of bytes; `Cpu` is a bare number of cores or millicores with `m`.

Example:
    memory = 4          // 4 what?

Fix: write `memory = 4Gi`.";

"E0204", "unknown enum variant",
"An enum literal (`.name`) is not a variant of the expected enum.

Example:
    mode = .readonly

Fix: use one of the variants listed in the message, e.g. `.read_only`.";

"E0205", "invalid requirement or match spec",
"A Python package is not a valid PEP 508 requirement (or a conda package not a valid match spec). Requirements are validated at compile time.

Example:
    python.packages = [\"numpy>=>1.2\"]

Fix: write a valid requirement, e.g. `numpy>=1.2`.";

"E0206", "unknown type",
"A type annotation names a type that does not exist. Built-in types are `Bool Int Float String Path Url Version Image Memory Cpu Requirement MatchSpec File Secret`, `[T]`, `{String: T}`, `T?`, enums and the Env schema's records (`Env Volume Gpu Asset Copy User Distributed Mode ...`).

Fix: use one of those, or declare the enum.";

"E0207", "invalid quantity arithmetic",
"Quantities add and subtract only with quantities of the same kind, multiply by plain numbers, and Memory must stay a whole, non-negative number of bytes.

Example:
    memory = 4Gi + 2      // 2 what?

Fix: write `4Gi + 2Gi`.";

"E0208", "invalid value",
"A value has the right type but is not valid for it: a version, a container path, a volume source scheme, a `sha256` checksum, two volumes with one name, a `depends_on` naming no service. (Image references, URLs, package and user names, and out-of-range integers have codes of their own: E0318–E0328.)

Fix: follow the message; it names what is accepted.";

"E0209", "missing required field",
"An env that is built needs a `base` image: one that `sclc build` lowers, or one used as a service. An env without `base` (and without `services`) can still be checked and extended — a parent or mixin such as a set of packages — but there is nothing to build from it; `sclc build FILE` without `--env` skips it with a note. Records such as Volume need all their required fields.

Fix: set the field, or inherit it with `extends`.";

"E0210", "cannot interpolate",
"Only strings, numbers, booleans, enums, quantities and paths can be interpolated into a string. Lists and records have no single text form, and interpolating a secret would write it into an artifact as plain text.

Fix: use `join(list, \",\")` for lists; pass secrets as whole values of `vars`.";

"E0211", "invalid operation",
"An operator or call was applied to values that do not support it (adding a string to a number, calling something that is not a function, indexing a string, ...).

Fix: the message names the types involved.";

"E0301", "extends cycle",
"Environments extend each other in a cycle; the message shows the cycle.

Example:
    env a extends b { }
    env b extends a { }

Fix: break the cycle: make one of them extend a common base instead.";

"E0302", "conflicting inherited values",
"Two parents that are not ancestors of each other write the same field (or map key) with different values, and the env that extends both does not decide. The labels show both writes.

Example:
    env left  { vars { MODE = \"fast\" } }
    env right { vars { MODE = \"safe\" } }
    env both extends left, right { }

Fix: set the field in the env itself (`vars { MODE = \"fast\" }`) to choose.";

"E0303", "parameter constraint violated",
"A `param` value (its default or a `--set` value) does not satisfy its `where` predicate.

Example:
    param replicas: Int = 0 where replicas >= 1

Fix: choose a value that satisfies the predicate.";

"E0304", "limit below request",
"A resource limit is smaller than its request (Kubernetes rejects such a pod).

Example:
    resources { requests.memory = 8Gi, limits.memory = 4Gi }

Fix: raise the limit or lower the request.";

"E0305", "set twice in one block",
"The same path or map key is set twice in one block (by `=` or `+=`), or an argument is given twice in one call; the second would silently win.

Fix: remove one of the two items.";

"E0306", "recursion",
"A function calls itself, directly or through other functions. SCL is total: recursion is not allowed, so evaluation always ends.

Fix: use a list comprehension or a lookup table instead.";

"E0307", "file not found",
"`file(...)` (or a `files[].from` path) names a file that does not exist, relative to the file that contains the call.

Fix: correct the path.";

"E0308", "unknown argument",
"A call or template instantiation passes a named argument that the function or template does not declare.

Example:
    env py(version: String) { ... }
    env app extends py(versoin = \"3.12\") { }

Fix: use the suggested argument name.";

"E0309", "missing argument",
"A function or template argument without a default was not given.

Fix: pass it by position or by name.";

"E0310", "self-reference cycle",
"A field depends on its own final value through `self`, so it has no value.

Example:
    workdir = \"${self.workdir}/x\"

Fix: compute the value from a `let` or a `param` instead.";

"E0311", "missing key or index",
"An index `x[k]` names a key the map does not have, or a list index out of range.

Fix: the message lists the keys that exist.";

"E0312", "unknown parameter",
"`--set NAME=VALUE` names a parameter that the module does not declare.

Fix: use a declared `param` (the help lists them).";

"E0313", "not an env",
"`extends` and `with` take an env (or a template instantiation); this expression is something else.

Fix: name an env declared with `env`.";

"E0314", "template used as an env",
"A template (an env with arguments) was used without arguments although some of its arguments have no defaults, or a template was asked for with `--env`.

Fix: instantiate it: `extends runtime(torch = \"2.1.2\", cuda = \"11.8\")`.";

"E0315", "unknown env",
"`--env NAME` names no env of the file.

Fix: use one of the envs listed in the help.";

"E0316", "evaluation too large",
"The program needs more than any real environment description: more than 20 million evaluation steps, a string of more than 16 MiB or a list of more than 16 Mi elements, more than 256 MiB of values in all (every string and list an operator, a builtin such as `join` or `replace`, a literal, a comprehension or an append makes counts, and so does the state an env copies from its parent), or calls nested more than 10,000 deep. It usually grows exponentially, e.g. a chain of `let`s or functions that each double a value, or nested `replace`.

Example:
    let s1 = \"${s0}${s0}\"
    let s2 = \"${s1}${s1}\"   // … 40 times

Fix: build the value directly; SCL evaluation must stay small.";

"E0317", "a parser failed on this value",
"A library that sclc uses to read a value (pep508_rs for Python requirements, rattler for conda match specs, oci-spec for image references, the url crate) failed on it instead of giving an error. sclc stops that failure at the boundary, so the value is refused with this error rather than crashing; the value is not valid in any case.

Example:
    python.packages = [\"a-}\"]     // a name must end with a letter or digit

Fix: correct the value (the help says what the grammar expects).";

"E0318", "integer out of range",
"An integer does not fit the field it is written to, and sclc never clamps or wraps a value. The message gives the allowed range: counts (`gpu.count`, `nodes`, `procs_per_node`, the `elastic` bounds) are 0 or 1 to 4294967295, `user.uid` is 0 to 4294967294 (4294967295 is `(uid_t)-1`, which chown and setuid read as \"no change\"), ports 1 to 65535; `elastic.max_nodes` may not be below `min_nodes`.

Example:
    user = { name = \"app\", uid = 4294967296 }

Fix: write a value inside the range.";

"E0319", "`--set` given twice",
"The same parameter is set twice on the command line (perhaps through two aliases of one module). sclc does not pick one silently.

Example:
    sclc ir train.env.scl --set gpus=2 --set gpus=4

Fix: give each parameter once.";

"E0320", "invalid system package name",
"A `system.packages` entry is not a package name for the env's package manager (`system.manager`, or the one inferred from the base image), so the install command would misread it — a value starting with `-` would even become an option of `apt-get`, `dnf`, `yum`, `microdnf` or `apk`.
- apt (Debian Policy §5.6.7, §5.6.12; apt-get(8)): `name[:arch][=version|/release]` — lower-case letters, digits and `+ - .`, at least two characters, starting with a letter or digit, not ending in `-` (`pkg-` means \"remove\"): `curl`, `curl=7.88.1-10`, `libc6:amd64`, `git/bookworm-backports`.
- dnf, yum and microdnf (rpm's name rules): letters, digits and `. _ + -` (`~ ^ :` in versions), starting with a letter, digit or `_`: `python3-devel`, `curl-8.6.0-1.fc40`.
- apk (apk-package(5), apk-world(5)): `name[@tag][op version]`, names of letters, digits and `. _ + -` and not containing `.apk`: `py3-numpy`, `curl=8.5.0-r0`, `busybox@edge`.

Example:
    system.packages = [\"-o\", \"APT::Get::AllowUnauthenticated=true\"]

Fix: list package names only; set options of the package manager elsewhere.";

"E0321", "invalid user name",
"`user.name` is not a portable user name. POSIX allows letters, digits, `. _ -` and no leading `-`; `useradd` (shadow's default rule) needs lower case, a first character in `a-z` or `_`, and at most 32 characters. sclc accepts the names every base image's tools accept: `[a-z_][a-z0-9_-]*`, up to 32 characters.

Example:
    user = { name = \"Trainer\", uid = 1000 }

Fix: write a lower-case name such as `trainer`.";

"E0322", "invalid Hugging Face repository, revision or file",
"An argument of `huggingface(...)` does not follow the Hub's rules, and would reach `huggingface-cli download` as something else (a leading `-` as an option).
- repository id (huggingface_hub's `validate_repo_id`): `name` or `namespace/name`, letters, digits, `- _ .`, no part starting or ending with `-` or `.`, no `--` or `..`, not ending in `.git`, a name of at most 96 characters;
- revision (git's ref-name rules): a branch, tag or commit, without spaces, `~ ^ : ? * [ \\`, `..`, `@{` or a leading `-`;
- files: paths inside the repository, without `.`/`..` components or a leading `/` or `-`.

Example:
    huggingface(\"bert base\", to = \"/models/bert\")

Fix: copy the id from the model's Hub page (`google-bert/bert-base-uncased`).";

"E0323", "invalid conda channel",
"A `conda.channels` entry is neither a channel name (`conda-forge`, `nvidia`, or `NAME/label/LABEL`: letters, digits and `- _ .`, starting with a letter or digit) nor an http(s) URL. Local paths are refused: they are not in the image.

Example:
    conda.channels = [\"--override-channels\"]

Fix: write the channel's name or its URL.";

"E0324", "invalid image reference",
"An image reference does not follow the grammar of distribution/reference (what Docker, Podman and every registry read): `[HOST[:PORT]/]NAME[:TAG][@sha256:DIGEST]`, a lower-case name of components separated by `/`, a tag of letters, digits, `_ . -` (at most 128, not starting with `.` or `-`), and a digest of `sha256:` and 64 hex digits. Nothing else is allowed — no `$VAR`, backquotes, spaces or a second `:`.

Example:
    base = image(\"debian:$TAG\")

Fix: write the reference as the registry shows it (`debian:12.5`), and use a param with interpolation for a varying tag: `image(\"debian:${tag}\")`.";

"E0325", "invalid URL",
"A URL is not valid by the URL Standard, as the url crate reads it. sclc also refuses a URL the standard would repair silently — a space, a backslash, a missing `//`, a bad `%` escape — so that every tool reads the same URL as the IR shows. This applies to every `Url` (`python.index_url`, `python.extra_index_urls`, `std/s3-data` sources); a download (`url(...)`), a conda channel URL and the `--index-url`/`--extra-index-url` lines of requirements files must also be http(s) with a host.

Example:
    python.index_url = \"https://pypi.example.com/my index\"

Fix: percent-encode special characters (`%20` for a space) and write `https://HOST/PATH`.";

"E0326", "URL asset that Docker would clone as git",
"A `url(...)` asset's path ends in `.git`. Docker's `ADD` (BuildKit) reads such a URL as a git repository and clones it, instead of downloading one file whose checksum sclc can pin.

Example:
    assets = [url(\"https://github.com/org/repo.git\", to = \"/opt/repo\")]

Fix: download a file (a release archive, `…/archive/refs/tags/v1.0.tar.gz`), or clone in a `setup` step (`git clone --depth 1 URL DIR`).";

"E0327", "file name that COPY reads as a pattern",
"A file read by `file(...)` or copied by `files[].from` has `*`, `?`, `[` or `\\` in its workspace-relative path (or a control character). Docker's `COPY` reads those as a pattern (`req[1].txt` copies `req1.txt`), so the image could get another file than the one whose sha256 the IR shows.

Example:
    python.requirements = [file(\"./req[1].txt\")]

Fix: rename the file or folder without those characters.";

"E0328", "workdir is a system folder",
"`workdir` is `/` or a top-level system folder of the base image (`/bin`, `/boot`, `/dev`, `/etc`, `/lib*`, `/proc`, `/run`, `/sbin`, `/sys`, `/usr`, `/var`). The image makes the workdir the runtime user's, which would hand a system folder to that user. Folders below them (`/usr/src/app`) are fine.

Example:
    workdir = \"/\"

Fix: use a folder of the application's own, such as `/workspace`.";

"E0329", "depends_on cycle",
"Services depend on each other in a cycle (or a service on itself), so none of them can start first. Every target refuses this; sclc reports it at `check`.

Example:
    services {
      web = app with { depends_on = [\"db\"] }
      db  = pg  with { depends_on = [\"web\"] }
    }

Fix: remove one `depends_on` entry of the cycle.";

"E0330", "two volumes on one mount path",
"Two volumes of one env are mounted at the same container path (compared after normalizing `/data/` to `/data`); the second would hide the first.

Fix: give each volume its own `mount`.";

"E0331", "unsupported requirements file option",
"A requirements file has an option that sclc cannot carry into the IR and that would change the build behind its back. sclc reads every option of every line as pip 26.3 does (short options, `--pypi-url`, and unique abbreviations such as `--extra` included):
- carried into the IR: `-i`/`--index-url` (as `python.index_url`) and `--extra-index-url` (appended to `python.extra_index_urls`);
- accepted (pip applies them to the file's own requirements): `--pre`, `--only-binary`, `--no-binary`, `--prefer-binary`, `--require-hashes`, `--no-require-hashes`, `--all-releases`, `--only-final`, and after a requirement `--hash` and `-C`/`--config-settings` (on a line of their own pip ignores these two: refused);
- refused: `-r`/`--requirement` and `-c`/`--constraint` (another file, not copied), `-e`/`--editable` (a local folder or checkout the image does not have), `-f`/`--find-links` (archives the IR does not carry), `--no-index` (would ignore the env's indexes), `--trusted-host` (turns off TLS checks), `--use-feature`; and any option other than `--hash` and `--config-settings` written after a requirement on its line, which pip ignores there.

Example:
    -e ./my-package

Fix: follow the help: list each file in `python.requirements`, install from an index, or move the setting into the env.";

"E0332", "conflicting index URLs",
"A requirements file's `--index-url` differs from the env's `python.index_url` (or from another file's `--index-url`), or it would make pip drop an extra index URL. pip would install from the file's index, not the one the IR shows, so sclc refuses the mismatch. pip replaces its whole list of indexes when it reads an `--index-url` line, so the env's `python.extra_index_urls` and every `--extra-index-url` read before that line would be dropped: that is refused too. A file's `--index-url` with no `python.index_url` in the env becomes the env's index.

Example:
    --extra-index-url https://extra.example.com/simple
    --index-url https://mirror.example.com/simple

Fix: remove the line, or make both the same; put the `--index-url` line first; use `--extra-index-url` / `python.extra_index_urls` for additional indexes.";

"E0333", "environment variable reference",
"A requirement (in `python.packages` or a requirements file) holds `${NAME}` (`NAME` of upper-case letters, digits and `_`). pip replaces such a reference in a requirements file from the environment of the build, and the PEP 508 parser sclc uses would replace it from sclc's own environment, so the env's result would depend on an environment variable. sclc refuses it (a reference inside a comment is fine).

Example:
    python.packages = [\"tool @ https://${HOST}/tool-1.0.whl\"]

Fix: write the value itself; a credential belongs in a secret, not in a requirement.";

"E0334", "requirements file encoding",
"pip decodes a requirements file by its byte-order mark, else by a PEP 263 `coding:` comment on one of its first two lines, else as UTF-8. sclc reads UTF-8 only, so that the text it checks is the text pip installs: a UTF-16 or UTF-32 file, a `coding:` comment naming another encoding (`utf-7` can hide a line break in plain ASCII), and bytes that are not UTF-8 are refused (ASCII is accepted for an ASCII file).

Example:
    # -*- coding: utf-7 -*-

Fix: save the file as UTF-8 and remove the `coding:` comment (or write `# -*- coding: utf-8 -*-`).";

"E0335", "requirements line pip cannot read",
"A line of a requirements file that pip would refuse, or whose words pip would ignore: an unknown or ambiguous option (`--pr` is `--pre` or `--prefer-binary`), an option without its value, a value given to a flag (`--pre=yes`), a quote left open, or words after the options of a line (`--pre numpy` does not install numpy: pip ignores words that are not options there).

Example:
    --pre numpy

Fix: write one requirement per line, before its options, and only the options pip's requirements file format documents.";

"E0336", "conda match spec with its own source",
"A conda match spec in `conda.packages` names a channel that is not in `conda.channels` (`evil::numpy`, `numpy[channel=https://…]`), or is a package URL (`https://…/numpy-1.26.4-0.conda`). conda would fetch that package from the channel or URL the spec names, past the list of channels the env declares and sclc checks. A channel in a spec is compared with the listed channels by rattler's canonical name (`conda-forge` is `https://conda.anaconda.org/conda-forge`).

Example:
    conda.channels = [\"conda-forge\"]
    conda.packages = [\"evil::numpy\"]

Fix: add the channel to `conda.channels` (where it is checked), or remove it from the match spec; publish a package given by URL in a channel.";

"E0337", "no one type",
"A construct whose parts must have one type has parts of different types: the elements of a list, the two branches of an `if`, the values of a record with quoted keys (a map), or the fields of a record read with a computed key (`table[k]` reads it as a map). The static type checker reports it wherever it is written, in a branch that does not run and in a template nobody calls yet.

Example:
    let ports = [8080, \"8081\"]
    let level = if debug then 1 else \"info\"

Fix: give every part the same type; to make text of a number, interpolate it (`\"${n}\"`).";

"E0501", "torch wheel built for another CUDA major",
"A torch, torchvision or torchaudio pin names a CUDA variant in its local version (`torch==2.1.2+cu118` is built for CUDA 11.8), and another pin that pip installs with it names another one (torchvision refuses a torch of another CUDA), or the base image is a devel image (`nvidia/cuda:12.1.1-cudnn8-devel-…`) of another CUDA major: torch's extension build (`torch.utils.cpp_extension`) refuses a toolkit of another CUDA major; another minor of the same major is only a warning there, and W0507 here. Pins whose environment markers exclude each other (`python_version < \"3.12\"`, `>= \"3.12\"`) are never installed together and are not compared.

Example:
    base = image(\"nvidia/cuda:12.1.1-cudnn8-devel-ubuntu22.04\")
    python.packages = [\"torch==2.1.2+cu118\"]

Fix: pin a variant of the image's CUDA that the release has (`torch==2.1.2+cu121`), or choose the image of the wheel's CUDA; the help names only variants and images that exist. sclc adds the wheel index (`--extra-index-url https://download.pytorch.org/whl/cu121`) itself.";

"E0502", "torch, torchvision and torchaudio of different releases",
"torchvision and torchaudio are built against one torch release each (torch 2.1.2 goes with torchvision 0.16.2 and torchaudio 2.1.2). A pin of another release, beside a torch pin it is installed with or the torch a base image ships, makes pip replace torch with the one the other package needs, or breaks at import. Pins whose environment markers exclude each other are not compared.

Example:
    python.packages = [\"torch==2.1.2\", \"torchvision==0.18.0\"]

Fix: pin the versions of one release; the help names the one that goes with the torch.";

"E0503", "Python outside the release's range",
"A torch (or TensorFlow) release is published for a range of Python versions (torch 2.1.2: 3.8–3.11). The Python the env runs is outside it, so there is no wheel to install. That Python is `python.version` with conda; otherwise the base image's own Python, or the `python3` its package manager installs (sclc installs no other, whatever `python.version` says: see W0506). Requirements whose environment marker excludes that Python (`torch==2.1.2; python_version < \"3.12\"`) are not counted.

Example:
    base = image(\"python:3.12-slim\")
    python.packages = [\"torch==2.1.2\"]

Fix: use an image whose Python is in the range (for `nvidia/cuda` images, the Ubuntu release: 20.04 has 3.8, 22.04 3.10, 24.04 3.12), or a release built for your Python; the help names both.";

"E0504", "python.version is not the image's Python",
"`python.version` says one Python, but the base image ships another (`python:3.11-slim` has 3.11), or has none and its package manager installs another (`python3` on Ubuntu 22.04 is 3.10), which is what sclc uses. sclc does not download Python builds. With `python.manager = .conda`, conda installs the version asked for, and this check does not apply.

Example:
    base = image(\"python:3.11-slim\")
    python.version = \"3.12\"

Fix: set `python.version` to the image's Python, or choose an image with the Python you need (`python:3.12-slim`).";

"E0505", "conda CUDA package of another CUDA",
"A conda package that fixes the CUDA version (`cudatoolkit`, `pytorch-cuda`, `cuda-version`, `cuda-toolkit`, `cuda-runtime`, `cuda-nvcc`, `cuda-cudart`) has a version spec that admits no version of the base image's CUDA. The spec is read as conda reads it (`cudatoolkit=11.8` is any 11.8.x, `cuda-version=12` any 12.x, `cuda-version=12.4|12.5`, `cuda-nvcc 12.4.131`, `cudatoolkit=11.8.0=h6a678d5_0`), and matched against the versions the package has: `cuda-version` and `pytorch-cuda` are versioned major.minor (`cuda-version>12.4` excludes a 12.4 image), the others by release and component patch (any `12.4.N`). A `cudatoolkit` without a version on a CUDA 12 image is one too: it stops at 11.8.

Example:
    base = image(\"nvidia/cuda:11.8.0-cudnn8-devel-ubuntu22.04\")
    conda.packages = [\"pytorch-cuda=12.1\"]

Fix: ask for the image's CUDA (`pytorch-cuda=11.8`), or drop the package and use the image's CUDA. `cudatoolkit` stops at 11.8 and `pytorch-cuda` was published for 11.6, 11.7, 11.8, 12.1 and 12.4 only: for other CUDAs the help suggests `cuda-version`.";

"E0506", "the driver is too old for the CUDA runtime",
"With `sclc check --driver VERSION` (or `sclc doctor`, which reads `nvidia-smi`), every CUDA runtime of the env — the base image's and each torch wheel's `+cuXYZ` — is compared with that NVIDIA driver. Under CUDA's minor-version compatibility a runtime of CUDA 12.x needs a driver ≥ 525.60.13, 13.x ≥ 580, 11.x ≥ 450.80.02; before CUDA 11 every release needs its own minimum (10.2: 440.33) (NVIDIA CUDA Toolkit release notes, \"CUDA Toolkit and Corresponding Driver Versions\"); the message also names the minimum for every feature of that release.

Example:
    sclc check --driver 520.61.05 train.env.scl   # base image nvidia/cuda:12.1.1-…

Fix: update the node's driver, or use an image and wheels for an older CUDA.";

"E0507", "GPU type needs a newer torch or CUDA",
"The GPU type the env requests (`resources.limits.gpu.type`) belongs to a generation that torch supports only from a release and CUDA on: Hopper (H100, compute capability 9.0) needs torch ≥ 2.0.1 and CUDA ≥ 11.8; Blackwell (B100/B200 10.0, RTX 50xx 12.0) needs torch ≥ 2.7.0 and CUDA ≥ 12.8 (the architectures torch's wheels are built for). The env's torch (its pin or the base image's) or CUDA (the wheel's variant or the image's) is older.

Example:
    base = image(\"pytorch/pytorch:1.13.1-cuda11.7-cudnn8-runtime\")
    resources.limits.gpu = { count = 8, type = \"NVIDIA-H100-80GB-HBM3\" }

Fix: use a torch and CUDA at or above the floor, or another GPU type.";

"E0508", "nvidia/cuda tag that does not exist",
"NVIDIA publishes `nvidia/cuda` tags as VERSION-[CUDNN-]FLAVOR-OS in lower case (`12.1.1-runtime-ubuntu22.04`, `12.8.1-cudnn-devel-ubuntu24.04`, `12.4.1-runtime-ubi9`): always with the full CUDA version, never without the patch version (`12.1-runtime-…`), a flavour (`12.1.1`) or an OS (`12.4.1-devel`). For the Ubuntu images sclc has the list of releases with images (NVIDIA publishes base, runtime and devel images, with and without cuDNN, of the same releases); a cuDNN tag must spell cuDNN as NVIDIA does for that release (`cudnn8` up to CUDA 12.2, `cudnn9` for 12.3, `cudnn` from 12.4), and a devel + cuDNN tag of a release not in the list is an error too. A reference with a digest is not judged (the digest is what is pulled). The help names the nearest tags that exist, in your flavour and OS. A release the list lacks in another tag is W0509.

Example:
    base = image(\"nvidia/cuda:12.1-runtime-ubuntu22.04\")

Fix: use a tag that exists, such as the one the help names.";

"E0509", "GPU requests and limits differ",
"Kubernetes takes GPUs (`nvidia.com/gpu`) as limits only: requests may be left out (they are then equal to the limits), but when both are given they must be equal (\"Schedule GPUs\", kubernetes.io). sclc writes the request from the limits itself.

Example:
    resources.requests.gpu = { count = 1 }
    resources.limits.gpu = { count = 2 }

Fix: write the GPUs once, as `resources.limits.gpu`.";

"E0510", "more processes than GPUs",
"`distributed` starts `procs_per_node` processes on every node, and with the NCCL backend each process needs a GPU of its own. The env requests fewer GPUs per node than processes, or none.

Example:
    resources.limits.gpu = { count = 1 }
    distributed { backend = .nccl, launcher = .torchrun, nodes = 2, procs_per_node = 4 }

Fix: one process per GPU (`procs_per_node` equal to the GPU count), or request more GPUs; use `backend = .gloo` for training on CPUs.";

"E0511", "torch wheel variant that does not exist",
"A torch, torchvision or torchaudio pin names a CUDA variant (`+cu118`) that the release was not published for: each torch release has wheels for a few CUDA versions only (torch 2.8.0: CUDA 12.6, 12.8 and 12.9), and torchaudio before 0.10 had no CUDA builds at all.

Example:
    python.packages = [\"torch==2.8.0+cu118\"]

Fix: use one of the variants the help lists, or a release built for your CUDA.";

"E0512", "torch wheel only on a find-links page",
"A torch, torchvision or torchaudio pin in `python.packages` names a variant that PyTorch published only on its find-links page (`https://download.pytorch.org/whl/torch_stable.html`: torch 1.10 and older, such as `torch==1.9.0+cu111`), not on a package index. pip finds it only with `--find-links`, which sclc does not give pip (a requirements file's `--find-links` is E0331: the IR does not carry the archives); it adds the index of newer variants (`https://download.pytorch.org/whl/cu118`) itself.

Example:
    python.packages = [\"torch==1.9.0+cu111\"]

Fix: use torch 1.11 or newer, whose CUDA wheels are on the indexes.";

"E0601", "image not pinned by scl.lock",
"The env's image is not pinned by `scl.lock` (`sclc check --locked`): the lock beside the file has no image for the env, or has one with another tag. The tag is a hash of the env's IR and of the files its image copies, so any change to the env, to what it imports, or to a copied file gives a new tag that no build has recorded yet. CI runs `sclc check --locked` to make sure that the images a commit names were built from that commit.

Example:
    sclc image build train.env.scl   # writes scl.lock
    # edit requirements.txt
    sclc check --locked train.env.scl

Fix: build the image again (`sclc image build FILE --env NAME`) and commit the updated `scl.lock`.";

"W0001", "decimal memory suffix",
"A memory quantity uses a decimal suffix (`G` = 10^9 bytes). Kubernetes and most tools use binary sizes (`Gi` = 2^30 bytes), and `32G` is about 7% less than `32Gi`.

Fix: write `32Gi` unless you really mean decimal gigabytes.";

"W0002", "download without checksum",
"A `url(...)` asset has no `sha256`, so the build cannot check that it downloaded what you meant, and rebuilding may silently change the file.

Fix: add `sha256 = \"<hex>\"` (e.g. from `sha256sum FILE`).";

"W0003", "floating image tag",
"The base image has no tag or the `latest` tag, so the build can change from day to day.

Fix: pin a tag (`debian:12.5`) or a digest.";

"E0401", "a value the target cannot write",
"`sclc build` refuses a value that the target's file format cannot hold exactly, instead of leaving it out: a line break, NUL or an invisible character (a carriage return, an escape sequence, a bidirectional override: a reviewer of the Dockerfile would not see what runs) in a package name, a path, a URL, a setup step, a label or an `ENV` value (a Dockerfile instruction is one line); an `ENV` name that is not one word; an `ignore` glob that `.dockerignore` would read as something else (a line break, an empty line, leading or trailing whitespace, which it strips); a multi-line `description` (a `LABEL` is one line); a malformed `sha256`; a value longer than a Dockerfile line may be; an env with no `base` and no services (nothing to build). Nothing is written; the message names the field.

Example:
    description = \"\"\"
      Fine-tune BERT
      on GLUE
      \"\"\"

Fix: write the value on one line (here: `description = \"Fine-tune BERT on GLUE\"`), or as the message says.";

"E0402", "a tool would misread this value",
"The value would reach a tool that reads it as something other than itself, so the image would not be what the IR says: a `dnf`, `yum` or `microdnf` package starting with `-` (read as an option; dnf 5 has no `--`, and sclc gives none to yum or microdnf), a user name of digits only (read as a uid), a `COPY` source with `*`, `?`, `[` or `\\` (read as a glob pattern, so another file than the one sclc hashed could be copied), a URL asset ending in `.git` (BuildKit's `ADD` clones it as a git repository) or not starting with `http://`/`https://`. Values that start with `-` are otherwise passed after `--` and are safe.

Example:
    python.requirements = [file(\"./req[1].txt\")]

Fix: rename the file (`req1.txt`), or change the value as the help says.";

"E0403", "a working directory the runtime user must not own",
"`workdir` must be an absolute path, and not `/` nor a top-level system folder (`/bin`, `/boot`, `/dev`, `/etc`, `/lib*`, `/proc`, `/run`, `/sbin`, `/sys`, `/usr`, `/var`): the Dockerfile would make it the user's working directory, and a folder the build creates there is given to that user. Deeper folders such as `/usr/src/app` are fine.

Example:
    workdir = \"/etc\"

Fix: use a folder of its own, such as `/workspace` or `/srv/app`.";

"E0404", "a reserved value",
"The source sets a value the target writes itself: the `dev.scl.ir.sha256` label of a Dockerfile is always the IR's content hash, so a label of that name in `labels` would be overwritten.

Example:
    labels = { \"dev.scl.ir.sha256\" = \"abc\" }

Fix: remove the label, or give it another name.";

"E0405", "a package name the package manager would read as a pattern",
"A `system.packages` entry reaches `apt-get install` as something apt does not read as one package: apt tries an argument that is not a package's exact name as an apt pattern (`?name(...)`, `~n...`), a task (`name^`), a glob (`*`, `?`, `[...]`) and a regular expression (`.`, `+`, `|`, `$`, …), so `libzstd?` or `zst*` installs every package that matches. Only Debian package names are written (lower-case letters, digits and `+ - .`, at least two characters, starting with a letter or digit; Debian Policy §5.6.7), optionally with `:ARCH`, `=VERSION` or `/RELEASE`. A real name with `.` or `+` (`libstdc++6`) is installed with apt's fallback turned off (`-o APT::Cmd::Pattern-Only=true`) and then checked with `dpkg-query`: if apt did not install a package of exactly that name (an older apt read it as a pattern, or it is a virtual package), the build stops with a message naming it.

Example:
    system.packages = [\"libzstd*\"]

Fix: name each package exactly (`libzstd1`, `libzstd-dev`); `apt-cache search` finds names.";

"E0406", "an output name that clashes",
"An env or a service would get an output folder that takes the place of a file sclc writes there, or of another output on a case-insensitive file system (the default on macOS and Windows): a service named `Dockerfile`, `Dockerfile.dockerignore`, `.dockerignore`, `.sclc-output`, anything starting with `.sclc-` or ending in `.dockerignore` (in any case), or two services of one env (or two envs of one file) whose names differ only in case (`WebUI` and `webui`). Nothing is written.

Example:
    services { Dockerfile = api }

Fix: rename the service or env.";

"E0407", "an ignore glob BuildKit rejects",
"An `ignore` glob would fail the build, or match other files, when BuildKit reads the `.dockerignore` with its pattern matcher (moby/patternmatcher, Go's `filepath.Match` syntax turned into a regular expression): a `[` without its `]`, an empty `[]` or a `-` or `]` where a character of `[...]` must be (`[-x]`, `[x-]`, `[a-b-c]`), a range that runs backwards (`[z-a]`), `*`, `?` or `[` inside `[...]` (read as a wildcard or a POSIX class there; write `[\\*]`), a `\\` before a letter, a digit or a non-ASCII character (`\\d` is read as \"any digit\", `\\q` is an error), or a trailing `\\`. A `^` outside `[...]` is not an error: sclc writes it as `\\^`.

Example:
    ignore = [\"data/[\"]

Fix: close the bracket (`data/[ab]`), or escape the character with `\\` (`data/\\[`).";

"E0408", "the base image lacks what the env needs",
"The env asks for a tool its base image does not have and sclc will not install: conda (`conda.packages`, or `python.manager = .conda`) on an image without conda, such as `python:3.11-slim` or `debian:12`. sclc knows the common base-image families (Debian, Ubuntu, `python`, `nvidia/cuda`, `pytorch/pytorch`, NGC, conda and micromamba images, Alpine, Fedora/UBI/Rocky) and what each has; Python itself is installed where it is missing, but conda is not downloaded into an image (an installer fetched at build time is neither pinned nor checked). The micro images (`ubi9/ubi-micro`, `ubi8/ubi-micro`, `almalinux:9-micro`) have no package manager, no Python and no `useradd`: `system.packages`, the Python that `python.packages`, requirements files or Hugging Face assets need, and the runtime user (other than root) cannot be installed there, in `base` or in `builder`.

Example:
    base = image(\"python:3.11-slim\")
    conda.packages = [\"numpy\"]

Fix: build on an image that has conda (`condaforge/miniforge3`, `continuumio/miniconda3` or `pytorch/pytorch`), or install the packages with pip; instead of a micro image, build on one with a package manager (`ubi9/ubi-minimal`, `almalinux:9-minimal`), or run as root and install nothing.";

"W0004", "not expressible in this target",
"The target format cannot express a field of the env; the artifact leaves it out. The message names the field.

Fix: none needed if the target does not need it; otherwise use a target that supports it.";

"W0005", "too many warnings",
"A file has more than 100 diagnostics, all warnings past the first 100. Only the first 100 (by position) are shown, in every front end; this one says how many more there are.

Fix: fix the warnings shown first, or the common cause of them (often one repeated pattern).";

"W0006", "setup step ends with a backslash",
"A `setup` step ends with `\\`. In a Dockerfile that would continue the command on the next line, but each element of `setup` is a shell script of its own (run with `sh -e`), so the next step does not continue it: the first runs a command cut short, the second a command without its beginning.

Example:
    setup = [\"apt-get update && apt-get install -y \\\\\", \"  curl\"]

Fix: write the command as one step, or as one multi-line step with `\"\"\"`.";

"W0501", "pip torch pin replaces the image's torch",
"The base image ships torch (`pytorch/pytorch:2.1.2-…` has torch 2.1.2), and a pip pin asks for another version. pip installs the pinned torch and its own CUDA libraries over the image's: a larger image, a second CUDA, and the image no longer what its tag says.

Example:
    base = image(\"pytorch/pytorch:2.1.2-cuda11.8-cudnn8-runtime\")
    python.packages = [\"torch==2.4.0\"]

Fix: pin the image's torch (or leave torch out), or use the image of the torch you need.";

"W0502", "Python package needs system libraries",
"Some Python packages load system libraries their wheels do not contain (`opencv-python` needs `libgl1` and `libglib2.0-0`); others have no Linux wheel, and pip compiles them from source, which needs a C compiler and the C library's headers besides the library's own (`psycopg2`: `gcc`, `libc6-dev`, `libpq-dev`), and the Python headers: `python:*` images have them, an image whose Python comes from apt needs `python3-dev` too. On a Debian or Ubuntu image without them, either the install succeeds and the import fails, or the build fails. sclc knows a small table of such packages; the quick fix adds the missing packages to `system.packages`.

Example:
    base = image(\"python:3.11-slim\")
    python.packages = [\"opencv-python==4.10.0.84\"]

Fix: `system.packages += [\"libgl1\", \"libglib2.0-0\"]` (or use the package's headless variant where there is one); for a source build, every package the warning names (`gcc`, `libc6-dev`, the library's `-dev` package; `python3-dev` where the image's Python comes from apt), or the package's binary variant (`psycopg2-binary`).";

"W0503", "Hugging Face asset at a moving revision",
"A `huggingface(...)` asset is fetched at a revision that is a branch or tag (`main`, the default), not a commit: the files can change between two builds of the same source.

Example:
    assets = [huggingface(\"bert-base-uncased\", files = [\"config.json\"], to = \"/models/bert\")]

Fix: pin the commit: `revision = \"<40-hex commit>\"` (the repository's History page, or `git ls-remote https://huggingface.co/REPO`).";

"W0504", "credential in plain text",
"A value that looks like a credential is written as plain text. By name: a variable whose last word is `TOKEN`, `KEY`, `APIKEY`, `PAT` or `PWD`, or with `PASSWORD`, `PASSWD`, `PASSPHRASE` or `SECRET` anywhere in it (`DB_PASSWORD`, `PGPASSWORD`, `SECRET_KEY_BASE`), other than a name about a secret (`SECRET_NAME`, `PASSWORD_FILE`, `KEY_PATH`), a tokenizer setting (`EOS_TOKEN`, `SPECIAL_TOKEN`), a count (`MAX_NEW_TOKEN`), a key of data (`CACHE_KEY`) or public material (`PUBLIC_KEY`, `GPG_KEY`, a fingerprint), whose value is not a `$…` reference, a path, a file name (`id_ed25519`, `key.pem`), an ARN or a tokenizer token (`<|endoftext|>`, `[CLS]`): under a password's name any other value of 8 characters or more, under the other names a value that looks generated (a run of letters and digits mixed, not a slug such as `model-v2`). By value, anywhere in `vars`, `labels`, `setup`, `command`, `entrypoint`, `test`, package references, conda channels, asset URLs and the description: a known token shape (Hugging Face `hf_…`, GitHub `ghp_…`/`github_pat_…`, GitLab `glpat-…`, AWS `AKIA…`, OpenAI `sk-` and 32 or more letters and digits or `sk-proj-`/`sk-svcacct-`/`sk-admin-…`, Anthropic `sk-ant-…`, Slack `xox?-…`, Google `AIza…`, a PEM private key `-----BEGIN … PRIVATE KEY-----`). Also an index URL with `user:password@`. A plain value ends up in the image's layers, the job's spec and every lowered file.

Example:
    vars.HF_TOKEN = \"hf_aBcDeFgHiJkLmNoPqRsTuVwXyZ012345\"

Fix: `vars.HF_TOKEN = secret(\"hf-token\", key = \"token\")` (the runner provides it; sclc never writes its value); for an index, `python.index_credentials = secret(...)`.";

"W0505", "GPUs no process uses",
"`distributed` starts fewer processes per node than the GPUs each node gets, so some GPUs do nothing (one process per GPU is the rule of torchrun and NCCL).

Example:
    resources.limits.gpu = { count = 4 }
    distributed { backend = .nccl, launcher = .torchrun, nodes = 1, procs_per_node = 1 }

Fix: `procs_per_node` equal to the GPU count, or request fewer GPUs.";

"W0506", "python.version is not the Python the image gets",
"The base image has no Python of its own (`debian:12`, `ubuntu:22.04`, `nvidia/cuda:…`, `rockylinux:8`), or only the `python3` of its package manager (`rockylinux:9`, `amazonlinux:2023`), so sclc installs or uses that `python3` — Python 3.11 on Debian 12, 3.10 on Ubuntu 22.04, 3.12 on Ubuntu 24.04, 3.6 on EL7 and EL8 (CentOS 7, UBI 8, Rocky and Alma 8), 3.7 on Amazon Linux 2, 3.9 on EL9 and Amazon Linux 2023, 3.12 on EL10 — and `python.version` says another version. sclc does not download other Python builds.

Example:
    base = image(\"ubuntu:22.04\")
    python.version = \"3.12\"

Fix: set `python.version` to the Python of the image's OS, choose an image whose OS has the Python you need (`ubuntu:24.04` for 3.12, or `python:3.12-slim`), or use `python.manager = .conda`, which installs the version asked for.";

"W0507", "torch wheel built for another CUDA than the image",
"A torch, torchvision or torchaudio pin names a CUDA variant (`+cu121`) that is not the CUDA of the base image, and either the image is a runtime or base image (no nvcc) or it is a devel image of the same CUDA major. The wheel brings its own CUDA libraries and uses them, so the job runs; the image's CUDA libraries are dead weight, a driver must support both, and an extension built on a devel image gets `UserWarning: The detected CUDA version (12.4) has a minor version mismatch`. A devel image of another major is E0501.

Example:
    base = image(\"nvidia/cuda:12.4.1-cudnn-runtime-ubuntu22.04\")
    python.packages = [\"torch==2.1.2+cu121\"]

Fix: use the wheel of the image's CUDA when the release has one, or the image of the wheel's CUDA (`nvidia/cuda:12.1.1-cudnn8-runtime-ubuntu22.04`).";

"W0508", "GPU type spelled for another node label",
"On Kubernetes, `gpu.type` becomes a node selector on the label `gpu.node_label` (default `nvidia.com/gpu.product`, which NVIDIA's GPU Feature Discovery sets to the product name, `NVIDIA-A100-SXM4-80GB`, `Tesla-V100-SXM2-16GB`). A type spelled as GKE's accelerator label spells GPUs (`nvidia-tesla-v100`, `nvidia-a100-80gb`: lower case, `nvidia-…`) with that label — or a product name with `node_label = \"cloud.google.com/gke-accelerator\"` — matches no node.

Example:
    resources.limits.gpu = { count = 1, type = \"nvidia-tesla-v100\" }

Fix: on GKE, set `node_label = \"cloud.google.com/gke-accelerator\"` in the GPU record; elsewhere write the product name as GPU Feature Discovery labels it (`nvidia-smi --query-gpu=name`, spaces as `-`).";

"W0509", "nvidia/cuda tag sclc does not know",
"An `nvidia/cuda` tag on Ubuntu names a version that is no CUDA release sclc knows (`12.4.7-runtime-ubuntu22.04`: the 12.4 releases are 12.4.0 and 12.4.1), or a CUDA with no image on that Ubuntu in sclc's table of published images (`12.1.1-runtime-ubuntu24.04`: Ubuntu 24.04 images start with CUDA 12.5). Another patch release of a minor the table has on that Ubuntu is not judged. The table cannot be complete, so this is a warning.

Example:
    base = image(\"nvidia/cuda:12.4.7-runtime-ubuntu22.04\")

Fix: use a tag the help names; if the tag does exist, the warning is a gap of the table.";
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn codes_are_unique_and_well_formed() {
        let mut seen = std::collections::HashSet::new();
        for c in CODES {
            assert!(seen.insert(c.code), "duplicate {}", c.code);
            assert_eq!(c.code.len(), 5);
            assert!(c.code.starts_with('E') || c.code.starts_with('W'));
            assert!(c.code[1..].chars().all(|d| d.is_ascii_digit()));
            assert!(!c.explanation.is_empty());
        }
    }
}
