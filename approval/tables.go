package approval

// The option tables of T11: one entry per program, each written from the
// manual and the version it cites. Opts lists what a command may say (see
// Program); an option or word not listed makes the command ask. Longs are
// the long options of the program's `--help` of that version, every one,
// so that an abbreviation is read as the program reads it (the cited
// programs take any unambiguous prefix of a long option, as getopt_long
// does; git and npm tables take exact names only). A table edit that
// changes a decision is a new version of the matcher (TablesCurrent).

// Shared git option lists (git 2.39: git-diff(1) "diff options",
// git-log(1) "commit limiting" and "commit formatting").
const (
	gitDiffOpts = "-p -u --patch | -s --no-patch | -U=NUM --unified=NUM | --raw | --patch-with-raw | --patch-with-stat | -t | " +
		"--stat[=LIT] | --stat-width=NUM | --stat-count=NUM | --numstat | --shortstat | --dirstat[=LIT] | --cumulative | --summary | " +
		"--compact-summary | --name-only | --name-status | --check | -z | --no-color | --color[=LIT] | --color-moved[=LIT] | " +
		"--no-color-moved | --word-diff[=LIT] | --word-diff-regex=LIT | --color-words[=LIT] | --no-renames | --rename-empty | " +
		"--no-rename-empty | -M[=LIT] --find-renames[=LIT] | -B[=LIT] --break-rewrites[=LIT] | -C[=LIT] --find-copies[=LIT] | " +
		"--find-copies-harder | -D --irreversible-delete | -l=NUM | --diff-filter=LIT | -S=LIT | -G=LIT | --find-object=LIT | " +
		"--pickaxe-all | --pickaxe-regex | -O=PATH | --skip-to=LIT | --rotate-to=LIT | -R | --relative[=LIT] | --no-relative | " +
		"-a --text | --ignore-cr-at-eol | --ignore-space-at-eol | -b --ignore-space-change | -w --ignore-all-space | " +
		"--ignore-blank-lines | -I=LIT --ignore-matching-lines=LIT | --inter-hunk-context=NUM | -W --function-context | " +
		"--exit-code | --quiet | --no-ext-diff | --no-textconv | --ignore-submodules[=LIT] | --src-prefix=LIT | --dst-prefix=LIT | " +
		"--no-prefix | --line-prefix=LIT | --abbrev[=NUM] | --full-index | --binary | --minimal | --patience | --histogram | " +
		"--anchored=LIT | --diff-algorithm=LIT | --indent-heuristic | --no-indent-heuristic | >--output=OUT | " +
		"!--ext-diff | !--textconv"
	gitLogOpts = "-n=NUM --max-count=NUM | --skip=NUM | --since=LIT --after=LIT | --until=LIT --before=LIT | --author=LIT | " +
		"--committer=LIT | --grep=LIT | --all-match | --invert-grep | -i --regexp-ignore-case | -E --extended-regexp | " +
		"-F --fixed-strings | -P --perl-regexp | --merges | --no-merges | --min-parents=NUM | --max-parents=NUM | --first-parent | " +
		"--all | --branches[=LIT] | --tags[=LIT] | --remotes[=LIT] | --exclude=LIT | --follow | --oneline | --graph | " +
		"--decorate[=LIT] | --no-decorate | --pretty[=LIT] | --format=LIT | --abbrev-commit | --no-abbrev-commit | --date=LIT | " +
		"--relative-date | --reverse | --topo-order | --date-order | --author-date-order | --parents | --children | --left-right | " +
		"--cherry-pick | --cherry-mark | --cherry | --boundary | --full-history | --simplify-by-decoration | --simplify-merges | " +
		"--ancestry-path | --source | --log-size | --no-walk[=LIT] | -L=RANGE | --mailmap | --use-mailmap | --no-mailmap | " +
		"--encoding=LIT | --expand-tabs[=NUM] | --no-expand-tabs | -m | -c | --cc | --dd | --diff-merges=LIT | --no-diff-merges | " +
		"--remerge-diff | --notes[=LIT] | --no-notes | --show-notes[=LIT] | --date-order | !--show-signature | !--stdin"
)

// gitSub is a git subcommand's table: options and pathspec or revision
// operands.
func gitSub(class Class, opts string, check func(*parsed) bool) *Program {
	return &Program{Class: class, Cite: gitCite, Opts: opts, Operands: argRev, Check: check}
}

const gitCite = "git 2.39 (2.39.5), git(1) and git-<command>(1)"

// coreutilsTested is the tested range of the GNU coreutils tables.
const coreutilsTested = "8.30-9.5"

// programTables are the tables, by program name.
var programTables = map[string]*Program{
	"git": {
		Class: ClassPure, Cite: gitCite, Tested: "2.30-2.49",
		Opts: "-C=DIR | --no-pager -P | --no-replace-objects | --literal-pathspecs | --glob-pathspecs | --noglob-pathspecs | " +
			"--icase-pathspecs | --no-optional-locks | --version | !-c=LIT | !--config-env=LIT | !--exec-path[=LIT] | " +
			"!--git-dir=LIT | !--work-tree=LIT | !--namespace=LIT | !-p --paginate | !--bare | !--super-prefix=LIT",
		Subs: map[string]*Program{
			"status": gitSub(ClassPure, "-s --short | -b --branch | --show-stash | --porcelain[=LIT] | --long | -v --verbose | "+
				"-u[=LIT] --untracked-files[=LIT] | --ignored[=LIT] | --ignore-submodules[=LIT] | -z | --column[=LIT] | --no-column | "+
				"--ahead-behind | --no-ahead-behind | --renames | --no-renames | --find-renames[=LIT]", nil),
			"log":  gitLog(),
			"show": gitLog(),
			// --no-index compares two folders recursively, key files
			// included.
			"diff": gitSub(ClassPure, gitDiffOpts+" | --cached | --staged | --merge-base | !--no-index", nil),
			"rev-parse": gitSub(ClassPure, "--abbrev-ref[=LIT] | --short[=NUM] | --verify | -q --quiet | --show-toplevel | "+
				"--show-prefix | --show-cdup | --git-dir | --git-common-dir | --absolute-git-dir | --is-inside-work-tree | "+
				"--is-inside-git-dir | --is-bare-repository | --is-shallow-repository | --symbolic | --symbolic-full-name | "+
				"--all | --branches | --tags | --remotes | --sq | --default=LIT | --show-object-format[=LIT]", nil),
			"branch": gitSub(ClassPure, "-a --all | -r --remotes | -l --list | -v --verbose | --show-current | --contains=LIT | "+
				"--no-contains=LIT | --merged=LIT | --no-merged=LIT | --sort=LIT | --format=LIT | --points-at=LIT | --column[=LIT] | "+
				"--no-column | --color[=LIT] | --no-color | -i --ignore-case | --abbrev=NUM | --no-abbrev | -q --quiet", createsWithOperands("-l")),
			"tag": gitSub(ClassPure, "-l --list | -n[=NUM] | --sort=LIT | --contains=LIT | --no-contains=LIT | --merged=LIT | "+
				"--no-merged=LIT | --points-at=LIT | --column[=LIT] | --no-column | --format=LIT | -i --ignore-case | --color[=LIT]",
				createsWithOperands("-l")),
			"ls-files": gitSub(ClassPure, "-c --cached | -d --deleted | -m --modified | -o --others | -i --ignored | -s --stage | "+
				"-u --unmerged | -k --killed | -z | -t | -v | -f | --directory | --no-empty-directory | --exclude-standard | "+
				"-x=LIT --exclude=LIT | -X=PATH --exclude-from=PATH | --exclude-per-directory=LIT | --error-unmatch | --full-name | "+
				"--abbrev[=NUM] | --debug | --eol | --deduplicate | --sparse | --format=LIT", nil),
			"blame": gitSub(ClassPure, "-L=LIT | -l | -t | -S=PATH | --reverse=LIT | --first-parent | -p --porcelain | "+
				"--line-porcelain | --incremental | --encoding=LIT | --contents=PATH | --date=LIT | -M[=LIT] | -C[=LIT] | "+
				"--ignore-rev=LIT | --ignore-revs-file=PATH | --color-lines | --color-by-age | --progress | --no-progress | "+
				"-e --show-email | -w | -s | -f --show-name | -n --show-number | -c | --root | --show-stats | --abbrev=NUM | -b", nil),
			"describe": gitSub(ClassPure, "--all | --tags | --contains | --abbrev=NUM | --candidates=NUM | --exact-match | --debug | "+
				"--long | --match=LIT | --exclude=LIT | --always | --first-parent | --dirty[=LIT] | --broken[=LIT]", nil),
			"shortlog": gitSub(ClassPure, "-n --numbered | -s --summary | -e --email | --format=LIT | --group=LIT | -c --committer | "+
				"-w[=LIT] | --all | --since=LIT --after=LIT | --until=LIT --before=LIT | --no-merges | --author=LIT", nil),
			// git-config(1) of 2.39 has no subcommand words: `git config
			// NAME VALUE [VALUE-PATTERN]` writes. Only the read forms match:
			// one action option of these, with its operands. Its options end
			// at the first operand (`git config alias.x --get-regexp` sets
			// alias.x).
			"config": gitSub(ClassPure, "--get | --get-all | --get-regexp | --get-urlmatch | -l --list | --show-origin | "+
				"--show-scope | -z --null | --name-only | --includes | --no-includes | --local | --global | --system | --worktree | "+
				"-f=PATH --file=PATH | --blob=LIT | --type=LIT | --bool | --int | --bool-or-int | --path | --expiry-date | "+
				"--default=LIT | --fixed-value | !--add | !--replace-all | !--unset | !--unset-all | !--rename-section | "+
				"!--remove-section | !-e --edit | !--get-color | !--get-colorbool", gitConfigRead).stopAtFirst(),
			// add and commit write the index and history; commit runs the
			// repository's hooks, the workspace's code. A commit without a
			// message would run an editor.
			"add": {Class: ClassPure, Cite: gitCite, Writes: true, Operands: argRev,
				Opts: "-n --dry-run | -v --verbose | -u --update | -A --all --no-ignore-removal | --no-all --ignore-removal | " +
					"-N --intent-to-add | --refresh | --ignore-errors | --ignore-missing | --renormalize | --sparse | --chmod=LIT | " +
					"--pathspec-from-file=PATH | --pathspec-file-nul | !-f --force | !-p --patch | !-i --interactive | !-e --edit"},
			"commit": {Class: ClassRunsWorkspaceCode, Cite: gitCite, Writes: true, Operands: argRev, Check: gitCommitMessage,
				Opts: "-m=LIT --message=LIT | -F=PATH --file=PATH | -a --all | -q --quiet | -v --verbose | --amend | --no-edit | " +
					"--allow-empty | --allow-empty-message | -s --signoff | --no-signoff | --author=LIT | --date=LIT | -n --no-verify | " +
					"--no-post-rewrite | -o --only | -i --include | --dry-run | --short | --branch | --porcelain | --long | -z | " +
					"--reset-author | --cleanup=LIT | -u[=LIT] --untracked-files[=LIT] | --pathspec-from-file=PATH | " +
					"--pathspec-file-nul | !-e --edit | !-c=LIT --reedit-message=LIT | !-t=LIT --template=LIT | !--fixup=LIT | " +
					"!--squash=LIT | !-S[=LIT] --gpg-sign[=LIT] | !-p --patch | !--interactive"},
		},
	},
	"tar": {
		Class: ClassPure, Cite: "GNU tar 1.34, tar(1) and `tar --help`", Tested: "1.30-1.35", OldStyle: true, Operands: argLit, Check: tarCheck,
		Runs: []string{"gzip", "bzip2", "xz", "lzip", "lzma", "lzop", "zstd", "compress"},
		// Extract, list and compare only: create, append and update read
		// every file under their operands, key files included.
		Opts: "-x --extract --get | -t --list | -d --diff --compare | -f=ARCH --file=ARCH | --force-local | -v --verbose | " +
			"-z --gzip --gunzip --ungzip | -j --bzip2 | -J --xz | --lzip | --lzma | --lzop | --zstd | -Z --compress --uncompress | " +
			"-a --auto-compress | --no-auto-compress | -C=DIR --directory=DIR | -p --preserve-permissions --same-permissions | " +
			"--no-same-permissions | -k --keep-old-files | --skip-old-files | --keep-newer-files | --keep-directory-symlink | " +
			"--overwrite | --overwrite-dir | --no-overwrite-dir | -U --unlink-first | -O --to-stdout | --exclude=LIT | " +
			"-X=PATH --exclude-from=PATH | -T=PATH --files-from=PATH | --strip-components=NUM | --no-same-owner | --same-owner | " +
			"--numeric-owner | --wildcards | --no-wildcards | --anchored | --no-anchored | --ignore-case | --no-ignore-case | " +
			"--wildcards-match-slash | --no-wildcards-match-slash | -m --touch | -W --verify | --one-top-level[=DIR] | " +
			"--transform=LIT --xform=LIT | --show-transformed-names | --show-stored-names | -i --ignore-zeros | --occurrence[=NUM] | " +
			"--null | --no-null | -b=NUM --blocking-factor=NUM | -B --read-full-records | --record-size=NUM | " +
			"--delay-directory-restore | --no-delay-directory-restore | --utc | --full-time | --no-recursion | --recursion | " +
			"--warning=LIT | --quoting-style=LIT | -R --block-number | -S --sparse | --totals[=LIT] | " +
			"!-c --create | !-r --append | !-u --update | !-A --catenate --concatenate | !--delete | !--test-label | " +
			"!-I=LIT --use-compress-program=LIT | !-F=LIT --info-script=LIT --new-volume-script=LIT | !--to-command=LIT | " +
			"!--checkpoint-action=LIT | !--checkpoint[=LIT] | !--rsh-command=LIT | !--rmt-command=LIT | !-M --multi-volume | " +
			"!-L=LIT --tape-length=LIT | !-P --absolute-names | !--index-file=LIT | !-g=LIT --listed-incremental=LIT | " +
			"!-G --incremental | !-V=LIT --label=LIT | !--volno-file=LIT | !-w --interactive --confirmation | !--remove-files | " +
			"!--recursive-unlink",
		Longs: longsTar,
	},
	"grep": {
		Class: ClassPure, Cite: "GNU grep 3.8, grep(1)", Tested: "3.4-3.11", First: argLit, Operands: argPath, Digits: true, Longs: longsGrep,
		// Never recursive: a search under a folder reads key files that no
		// word names (-r, -R, -d recurse and the --include family).
		Opts: "-E --extended-regexp | -F --fixed-strings | -G --basic-regexp | -P --perl-regexp | @-e=LIT --regexp=LIT | " +
			"@-f=PATH --file=PATH | -i --ignore-case | --no-ignore-case | -v --invert-match | -w --word-regexp | " +
			"-x --line-regexp | -y | -c --count | --color[=LIT] --colour[=LIT] | -L --files-without-match | " +
			"-l --files-with-matches | -m=NUM --max-count=NUM | -o --only-matching | -q --quiet --silent | -s --no-messages | " +
			"-b --byte-offset | -H --with-filename | -h --no-filename | --label=LIT | -n --line-number | -T --initial-tab | " +
			"-Z --null | -A=NUM --after-context=NUM | -B=NUM --before-context=NUM | -C=NUM --context=NUM | -a --text | " +
			"--binary-files=LIT | -I | -U --binary | -z --null-data | --line-buffered | --no-group-separator | " +
			"--group-separator=LIT | !-r --recursive | !-R --dereference-recursive | !-d=LIT --directories=LIT | " +
			"!-D=LIT --devices=LIT | !--include=LIT | !--exclude=LIT | !--exclude-from=LIT | !--exclude-dir=LIT",
	},
	"sed": {
		Class: ClassScripted, Cite: "GNU sed 4.9, sed(1) and the GNU sed manual", Tested: "4.7-4.9", First: argSed, Operands: argPath,
		Longs: longsSed, Check: sedCheck,
		Opts: "-n --quiet --silent | --debug | @-e=SED --expression=SED | >-i[=LIT] --in-place[=LIT] | -l=NUM --line-length=NUM | " +
			"--posix | -E -r --regexp-extended | -s --separate | --sandbox | -u --unbuffered | -z --null-data | " +
			"--follow-symlinks | !-f=LIT --file=LIT",
	},
	// Any awk program text asks: awk's system(), getline from a command,
	// print into a pipe or a file are everywhere in its grammar.
	"awk":  {Class: ClassScripted, Cite: "mawk 1.3.4, mawk(1)", Tested: "1.3.3-1.3.4", Probe: "-W version", First: argNever},
	"mawk": {Class: ClassScripted, Cite: "mawk 1.3.4, mawk(1)", Tested: "1.3.3-1.3.4", Probe: "-W version", First: argNever},
	"gawk": {Class: ClassScripted, Cite: "mawk 1.3.4, mawk(1); GNU awk's program text is read as mawk's", Tested: "5.0-5.3", First: argNever},
	"find": {
		Class: ClassPure, Cite: "GNU findutils 4.9.0, find(1)", Tested: "4.7-4.10", Find: true,
		Opts: "-name=LIT | -iname=LIT | -path=LIT | -ipath=LIT | -wholename=LIT | -iwholename=LIT | -regex=LIT | -iregex=LIT | " +
			"-regextype=LIT | -lname=LIT | -ilname=LIT | -type=LIT | -xtype=LIT | -size=LIT | -mtime=LIT | -mmin=LIT | " +
			"-atime=LIT | -amin=LIT | -ctime=LIT | -cmin=LIT | -used=LIT | -newer=PATH | -anewer=PATH | -cnewer=PATH | " +
			"-samefile=PATH | -perm=LIT | -user=LIT | -group=LIT | -uid=LIT | -gid=LIT | -links=LIT | -inum=LIT | -empty | " +
			"-readable | -writable | -executable | -nouser | -nogroup | -true | -false | -maxdepth=NUM | -mindepth=NUM | " +
			"-depth | -mount | -xdev | -follow | -noleaf | -ignore_readdir_race | -noignore_readdir_race | -daystart | -warn | " +
			"-nowarn | -print | -print0 | -printf=LIT | -ls | -prune | -quit | >-delete | >-fprint=OUT | >-fprint0=OUT | " +
			">-fprintf=OUT,LIT | >-fls=OUT | !-exec | !-execdir | !-ok | !-okdir",
	},
	"split": {
		Class: ClassPure, Cite: "GNU coreutils 9.1, split(1)", Tested: coreutilsTested, Writes: true, Operands: argLit, Longs: longsSplit, Check: splitCheck,
		Opts: "-a=NUM --suffix-length=NUM | --additional-suffix=LIT | -b=NUM --bytes=NUM | -C=NUM --line-bytes=NUM | -d | " +
			"--numeric-suffixes[=NUM] | -x | --hex-suffixes[=NUM] | -e --elide-empty-files | -l=NUM --lines=NUM | " +
			"-n=LIT --number=LIT | -t=LIT --separator=LIT | -u --unbuffered | --verbose | !--filter=LIT",
	},
	"sort": {
		Class: ClassPure, Cite: "GNU coreutils 9.1, sort(1)", Tested: coreutilsTested, Operands: argPath, Longs: longsSort,
		Opts: "-b --ignore-leading-blanks | -d --dictionary-order | -f --ignore-case | -g --general-numeric-sort | " +
			"-i --ignore-nonprinting | -M --month-sort | -h --human-numeric-sort | -n --numeric-sort | -R --random-sort | " +
			"--random-source=PATH | -r --reverse | -V --version-sort | --sort=LIT | --batch-size=NUM | -c | --check[=LIT] | -C | " +
			"--debug | -k=LIT --key=LIT | -m --merge | >-o=OUT --output=OUT | -s --stable | -S=LIT --buffer-size=LIT | " +
			"-t=LIT --field-separator=LIT | --parallel=NUM | -u --unique | -z --zero-terminated | !--compress-program=LIT | " +
			"!--files0-from=LIT | !-T=LIT --temporary-directory=LIT",
	},
	"cat": {Class: ClassPure, Cite: "GNU coreutils 9.1, cat(1)", Tested: coreutilsTested, Operands: argPath, Longs: longsCat,
		Opts: "-A --show-all | -b --number-nonblank | -e | -E --show-ends | -n --number | -s --squeeze-blank | -t | " +
			"-T --show-tabs | -u | -v --show-nonprinting"},
	"head": {Class: ClassPure, Cite: "GNU coreutils 9.1, head(1)", Tested: coreutilsTested, Operands: argPath, Digits: true, Longs: longsHead,
		Opts: "-c=NUM --bytes=NUM | -n=NUM --lines=NUM | -q --quiet --silent | -v --verbose | -z --zero-terminated"},
	"tail": {Class: ClassPure, Cite: "GNU coreutils 9.1, tail(1)", Tested: coreutilsTested, Operands: argPath, Digits: true, Longs: longsTail,
		Opts: "-c=NUM --bytes=NUM | -f | --follow[=LIT] | -F | -n=NUM --lines=NUM | --max-unchanged-stats=NUM | --pid=NUM | " +
			"-q --quiet --silent | --retry | -s=NUM --sleep-interval=NUM | -v --verbose | -z --zero-terminated"},
	"wc": {Class: ClassPure, Cite: "GNU coreutils 9.1, wc(1)", Tested: coreutilsTested, Operands: argPath, Longs: longsWc,
		Opts: "-c --bytes | -m --chars | -l --lines | -L --max-line-length | -w --words | !--files0-from=LIT"},
	"cut": {Class: ClassPure, Cite: "GNU coreutils 9.1, cut(1)", Tested: coreutilsTested, Operands: argPath, Longs: longsCut,
		Opts: "-b=LIT --bytes=LIT | -c=LIT --characters=LIT | -d=LIT --delimiter=LIT | -f=LIT --fields=LIT | -n | " +
			"--complement | -s --only-delimited | --output-delimiter=LIT | -z --zero-terminated"},
	// uniq's second operand is the file it writes.
	"uniq": {Class: ClassPure, Cite: "GNU coreutils 9.1, uniq(1)", Tested: coreutilsTested, Operands: argLit, MaxOps: 2, Longs: longsUniq, Check: uniqCheck,
		Opts: "-c --count | -d --repeated | -D | --all-repeated[=LIT] | -f=NUM --skip-fields=NUM | --group[=LIT] | " +
			"-i --ignore-case | -s=NUM --skip-chars=NUM | -u --unique | -z --zero-terminated | -w=NUM --check-chars=NUM"},
	"ls": {Class: ClassPure, Cite: "GNU coreutils 9.1, ls(1)", Tested: coreutilsTested, Operands: argPath, Longs: longsLs,
		Opts: "-a --all | -A --almost-all | --author | -b --escape | --block-size=LIT | -B --ignore-backups | -c | -C | " +
			"--color[=LIT] | -d --directory | -D --dired | -f | -F --classify[=LIT] | --file-type | --format=LIT | --full-time | " +
			"-g | --group-directories-first | -G --no-group | -h --human-readable | --si | -H --dereference-command-line | " +
			"--dereference-command-line-symlink-to-dir | --hide=LIT | --indicator-style=LIT | -i --inode | -I=LIT --ignore=LIT | " +
			"-k --kibibytes | -l | -L --dereference | -m | -n --numeric-uid-gid | -N --literal | -o | -p | " +
			"-q --hide-control-chars | --show-control-chars | -Q --quote-name | --quoting-style=LIT | -r --reverse | " +
			"-R --recursive | -s --size | -S | --sort=LIT | --time=LIT | --time-style=LIT | -t | -T=NUM --tabsize=NUM | -u | " +
			"-U | -v | -w=NUM --width=NUM | -x | -X | -Z --context | --zero | -1"},
	// No table for diff (GNU diffutils 3.8, diff(1)): given two folders
	// it compares the files of the same name in both, key files included,
	// and no option turns that off; its commands ask.
	// Shell builtins (bash 5.2, bash(1) "SHELL BUILTIN COMMANDS"; dash(1)).
	"echo":   {Class: ClassPure, Cite: bashCite, Text: true},
	"test":   {Class: ClassPure, Cite: bashCite, Text: true, Check: testCheck},
	"[":      {Class: ClassPure, Cite: bashCite, Text: true, Check: testCheck},
	"printf": {Class: ClassPure, Cite: bashCite, Opts: "!-v=LIT", First: argLit, Operands: argLit, StopAtFirst: true},
	"pwd":    {Class: ClassPure, Cite: bashCite, Opts: "-L | -P", NoOps: true},
	"cd":     {Class: ClassPure, Cite: bashCite, First: argDir, MaxOps: 1},
	"pushd":  {Class: ClassPure, Cite: bashCite, First: argDir, MaxOps: 1},
	"exit":   {Class: ClassPure, Cite: bashCite, Operands: argNum, MaxOps: 1},
	// Programs that run the workspace's code: a rule over one is consent
	// to run it. What they take from elsewhere (an inline program, a
	// package to fetch, an option that names another program) asks.
	"sh":   shellTable,
	"bash": shellTable,
	"dash": shellTable,
	"make": {Class: ClassRunsWorkspaceCode, Cite: "GNU Make 4.3, make(1)", Tested: "4.2-4.4", Operands: argTarget, Longs: longsMake, Runs: []string{"sh"},
		Opts: "-B --always-make | -C=DIR --directory=DIR | -d | --debug[=LIT] | -e --environment-overrides | " +
			"-f=SCRIPT --file=SCRIPT --makefile=SCRIPT | -i --ignore-errors | -j[=NUM] --jobs[=NUM] | -k --keep-going | " +
			"-l[=NUM] --load-average[=NUM] --max-load[=NUM] | -L --check-symlink-times | -n --just-print --dry-run --recon | " +
			"-o=LIT --old-file=LIT --assume-old=LIT | -O[=LIT] --output-sync[=LIT] | -p --print-data-base | -q --question | " +
			"-r --no-builtin-rules | -R --no-builtin-variables | -s --silent --quiet | --no-silent | -S --no-keep-going --stop | " +
			"-t --touch | --trace | -w --print-directory | --no-print-directory | -W=LIT --what-if=LIT --new-file=LIT --assume-new=LIT | " +
			"--warn-undefined-variables | !-E=LIT --eval=LIT | !-I=LIT --include-dir=LIT"},
	"npm": {
		Class: ClassRunsWorkspaceCode, Cite: "npm 10, npm-run-script(1) and npm-test(1) of the npm CLI documentation", Tested: "10-11", Runs: []string{"sh"},
		Subs: map[string]*Program{
			"run":        npmRun,
			"run-script": npmRun,
			"test":       {Class: ClassRunsWorkspaceCode, Cite: "npm 10, npm-test(1)", Opts: "--if-present | -s --silent", Operands: argRest},
		},
		Check: func(pr *parsed) bool { return false }, // npm alone
	},
	"python3": pythonTable,
	"python":  pythonTable,
	"node": {Class: ClassRunsWorkspaceCode, Cite: "Node.js 20, node(1)", Tested: "18-22", First: argScript, Operands: argRest, StopAtFirst: true,
		Opts: "--enable-source-maps | --no-warnings | --trace-warnings | --no-deprecation | --throw-deprecation | " +
			"--trace-uncaught | --max-old-space-size=NUM | --stack-size=NUM | --experimental-vm-modules | --test | --test-only | " +
			"!-e=LIT --eval=LIT | !-p=LIT --print=LIT | !-r=LIT --require=LIT | !--import=LIT | !--loader=LIT | " +
			"!--experimental-loader=LIT | !-i --interactive | !--inspect[=LIT] | !--inspect-brk[=LIT]"},
	"go": {
		Class: ClassRunsWorkspaceCode, Cite: "Go 1.22, `go help build`, `go help test`, `go help testflag`, `go help env`",
		Tested: "1.22-1.26", Probe: "version",
		Runs: []string{"go", "compile", "link", "asm", "cgo", "vet", "cover", "gcc", "gofmt"},
		Subs: map[string]*Program{
			"build":   goSub(">-o=OUT", argPkg),
			"test":    goSub(">-o=OUT | -c | -json | "+goTestFlags, argPkg),
			"vet":     goSub("-json | !-vettool=LIT", argPkg),
			"run":     {Class: ClassRunsWorkspaceCode, Cite: "Go 1.22, `go help run`", GoFlags: true, Opts: goBuildFlags, First: argPkg, Operands: argRest, StopAtFirst: true},
			"list":    goSub("-m | -json[=LIT] | -f=LIT | -e | -deps | -test | -find | -export | -compiled | -versions", argPkg),
			"fmt":     {Class: ClassPure, Cite: "Go 1.22, `go help fmt`", GoFlags: true, Writes: true, Opts: "-n | -x | -mod=LIT", Operands: argPkg},
			"version": {Class: ClassPure, Cite: "Go 1.22, `go help version`", NoOps: true},
			"env":     {Class: ClassPure, Cite: "Go 1.22, `go help env`", GoFlags: true, Opts: "-json | -changed | !-w | !-u", Operands: argLit},
		},
		Check: func(pr *parsed) bool { return false }, // go alone
	},
}

const bashCite = "bash 5.2, bash(1) SHELL BUILTIN COMMANDS; dash 0.5.12, dash(1)"

var shellTable = &Program{Class: ClassRunsWorkspaceCode, Cite: "bash 5.2, bash(1); dash 0.5.12, dash(1): a script file and its arguments",
	First: argScript, Operands: argRest, StopAtFirst: true}

var pythonTable = &Program{Class: ClassRunsWorkspaceCode, Cite: "CPython 3.11, python3(1)", Tested: "3.8-3.13", First: argScript, Operands: argRest,
	StopAtFirst: true, Opts: "-b | -B | -d | -E | -I | -O | -P | -q | -s | -S | -u | -v | -x | -X=LIT | " +
		"!-c=LIT | !-m=LIT | !-i | !-W=LIT"} // -W imports the module of a warning category it names

var npmRun = &Program{Class: ClassRunsWorkspaceCode, Cite: "npm 10, npm-run-script(1)", First: argLit, Operands: argRest,
	Opts: "--if-present | -s --silent"}

const (
	goBuildFlags = "-a | -n | -p=NUM | -race | -msan | -asan | -cover | -covermode=LIT | -coverpkg=LIT | -v | -work | -x | " +
		"-buildmode=LIT | -buildvcs=LIT | -compiler=LIT | -mod=LIT | -modcacherw | -modfile=PATH | -tags=LIT | -trimpath | " +
		"-pgo=LIT | !-asmflags=LIT | !-gccgoflags=LIT | !-gcflags=LIT | !-ldflags=LIT | !-linkshared | !-installsuffix=LIT | " +
		"!-overlay=LIT | !-pkgdir=LIT | !-toolexec=LIT | !-exec=LIT"
	goTestFlags = "-run=LIT | -skip=LIT | -bench=LIT | -benchtime=LIT | -benchmem | -count=NUM | -cpu=LIT | -failfast | " +
		"-fullpath | -list=LIT | -parallel=NUM | -short | -shuffle=LIT | -timeout=LIT | -vet=LIT | >-coverprofile=OUT | " +
		">-cpuprofile=OUT | >-memprofile=OUT | >-blockprofile=OUT | >-mutexprofile=OUT | >-trace=OUT | !-args"
)

func goSub(opts string, operands argType) *Program {
	return &Program{Class: ClassRunsWorkspaceCode, Cite: "Go 1.22, `go help build` and `go help testflag`", GoFlags: true,
		Opts: goBuildFlags + " | " + opts, Operands: operands}
}

func (p *Program) stopAtFirst() *Program {
	p.StopAtFirst = true
	return p
}

func gitLog() *Program {
	p := gitSub(ClassPure, gitDiffOpts+" | "+gitLogOpts, nil)
	p.Digits = true // -5
	return p
}

// Long options of each program's --help, of the version its table cites.
const (
	longsTar   = "absolute-names acls add-file after-date anchored append atime-preserve auto-compress backup block-number blocking-factor bzip2 catenate check-device check-links checkpoint checkpoint-action clamp-mtime compare compress concatenate confirmation create delay-directory-restore delete dereference diff directory exclude exclude-backups exclude-caches exclude-caches-all exclude-caches-under exclude-from exclude-ignore exclude-ignore-recursive exclude-tag exclude-tag-all exclude-tag-under exclude-vcs exclude-vcs-ignores extract file files-from force-local format full-time get group group-map gunzip gzip hard-dereference hole-detection ignore-case ignore-command-error ignore-failed-read ignore-zeros incremental index-file info-script interactive keep-directory-symlink keep-newer-files keep-old-files label level list listed-incremental lzip lzma lzop mode mtime multi-volume new-volume-script newer newer-mtime no-acls no-anchored no-auto-compress no-check-device no-delay-directory-restore no-ignore-case no-ignore-command-error no-null no-overwrite-dir no-quote-chars no-recursion no-same-owner no-same-permissions no-seek no-selinux no-unquote no-verbatim-files-from no-wildcards no-wildcards-match-slash no-xattrs null numeric-owner occurrence old-archive one-file-system one-top-level overwrite overwrite-dir owner owner-map pax-option portability posix preserve-order preserve-permissions quote-chars quoting-style read-full-records record-size recursion recursive-unlink remove-files restrict rmt-command rsh-command same-order same-owner same-permissions seek selinux show-defaults show-omitted-dirs show-snapshot-field-ranges show-stored-names show-transformed-names skip-old-files sort sparse sparse-version starting-file strip-components suffix tape-length test-label to-command to-stdout totals touch transform uncompress ungzip unlink-first unquote update usage use-compress-program utc verbatim-files-from verbose verify volno-file warning wildcards wildcards-match-slash xattrs xattrs-exclude xattrs-include xform xz zstd"
	longsGrep  = "after-context basic-regexp before-context binary binary-files byte-offset color colour context count dereference-recursive devices directories exclude exclude-dir exclude-from extended-regexp file files-with-matches files-without-match fixed-strings group-separator ignore-case include initial-tab invert-match label line-buffered line-number line-regexp max-count no-filename no-group-separator no-ignore-case no-messages null null-data only-matching perl-regexp quiet recursive regexp silent text with-filename word-regexp"
	longsSed   = "debug expression file follow-symlinks in-place line-length null-data posix quiet regexp-extended sandbox separate silent unbuffered"
	longsSplit = "additional-suffix bytes elide-empty-files filter hex-suffixes line-bytes lines number numeric-suffixes separator suffix-length unbuffered verbose"
	longsSort  = "batch-size buffer-size check compress-program debug dictionary-order field-separator files0-from general-numeric-sort human-numeric-sort ignore-case ignore-leading-blanks ignore-nonprinting key merge month-sort numeric-sort output parallel random-sort random-source reverse sort stable temporary-directory unique version-sort zero-terminated"
	longsCat   = "number number-nonblank show-all show-ends show-nonprinting show-tabs squeeze-blank"
	longsHead  = "bytes lines quiet silent verbose zero-terminated"
	longsTail  = "bytes follow lines max-unchanged-stats pid quiet retry silent sleep-interval verbose zero-terminated"
	longsWc    = "bytes chars files0-from lines max-line-length words"
	longsCut   = "bytes characters complement delimiter fields only-delimited output-delimiter zero-terminated"
	longsUniq  = "all-repeated check-chars count group ignore-case repeated skip-chars skip-fields unique zero-terminated"
	longsLs    = "all almost-all author block-size classify color context dereference dereference-command-line dereference-command-line-symlink-to-dir directory dired escape file-type format full-time group-directories-first hide hide-control-chars human-readable hyperlink ignore ignore-backups indicator-style inode kibibytes literal no-group numeric-uid-gid quote-name quoting-style recursive reverse show-control-chars si size sort tabsize time time-style width zero"
	longsMake  = "always-make assume-new assume-old check-symlink-times debug directory dry-run environment-overrides eval file ignore-errors include-dir jobs just-print keep-going load-average makefile max-load new-file no-builtin-rules no-builtin-variables no-keep-going no-print-directory no-silent old-file output-sync print-data-base print-directory question quiet recon silent stop touch trace warn-undefined-variables what-if"
)
