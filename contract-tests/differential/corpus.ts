/**
 * The differential corpus: short scripts an agent would plausibly run, each run on the fake and on Docker with the
 * same inputs. Ids are stable: the known-differences table refers to them.
 *
 * - `shell` entries run through `commands.run`. Dialect `bash` (the default) runs the script as-is on the fake (its
 *   shell is bash) and as `bash -c <script>` on Docker; dialect `sh` runs it as-is on both, so Docker's `sh` (dash on
 *   Debian images) is what the fake is compared with, as a user switching backends would see.
 * - `code` entries run through `runCode` (Python) on both.
 * - `context` entries run their cells one by one in one code context on the fake, and joined into one program with
 *   `runCode` on Docker (which has no contexts): the same program, state carried either way.
 * Each entry runs in a fresh directory of the workspace (its cwd), so entries do not see each other's files.
 */
export interface ShellEntry {
  readonly id: string;
  readonly kind: "shell";
  readonly script: string;
  readonly dialect?: "bash" | "sh";
  readonly stdin?: string;
  readonly outputLimitBytes?: number;
}

export interface CodeEntry {
  readonly id: string;
  readonly kind: "code";
  readonly code: string;
}

export interface ContextEntry {
  readonly id: string;
  readonly kind: "context";
  readonly cells: readonly string[];
}

export type CorpusEntry = ShellEntry | CodeEntry | ContextEntry;

const shell = (id: string, script: string, extra: Partial<ShellEntry> = {}): ShellEntry => ({ id, kind: "shell", script, ...extra });
const sh = (id: string, script: string, extra: Partial<ShellEntry> = {}): ShellEntry => ({ id, kind: "shell", script, dialect: "sh", ...extra });
const code = (id: string, source: string): CodeEntry => ({ id, kind: "code", code: source });
const context = (id: string, cells: readonly string[]): ContextEntry => ({ id, kind: "context", cells });

export const CORPUS: readonly CorpusEntry[] = [
  // Exit codes and $? across top-level statements (issue 14's cases first).
  shell("status.false", "false; echo rc=$?"),
  shell("status.subshell-exit", "(exit 3); echo rc=$?"),
  shell("status.pipeline-last", "true | false; echo rc=$?"),
  shell("status.pipefail", "set -o pipefail; false | true; echo rc=$?"),
  shell("status.ls-missing", "ls /nonexistent; echo rc=$?"),
  shell("status.python-exit", "python3 -c 'import sys; sys.exit(5)'; echo rc=$?"),
  shell("status.command-substitution", "x=$(false); echo rc=$?"),
  shell("status.cd-missing", "cd /nonexistent-dir; echo rc=$?"),
  shell("status.newline-separated", "false\necho rc=$?"),
  shell("status.pipestatus", "true | false | true; echo ${PIPESTATUS[@]}"),
  shell("status.pipestatus-next-line", "false | true\necho ${PIPESTATUS[0]} ${PIPESTATUS[1]}"),
  shell("status.negation", "! false; echo rc=$?"),
  shell("status.and-or", "false && echo no || echo yes; echo rc=$?"),
  shell("status.exit-code", "echo before; exit 42; echo after"),
  shell("status.last-command", "true; false"),
  shell("status.set-e", "set -e\necho one\nfalse\necho two"),
  shell("status.set-e-condition", "set -e\nif false; then echo no; fi\necho still-here"),
  shell("status.set-e-or", "set -e; false || echo recovered; echo end"),
  shell("status.set-u", "set -u; echo ${UNDEFINED_VARIABLE_X:-default}; echo ok"),
  shell("status.command-not-found", "no-such-command-xyz; echo rc=$?"),
  shell("status.exit-in-function", "f() { return 4; }; f; echo rc=$?"),
  shell("status.saved", "false; s=$?; true; echo $s"),
  shell("status.test-failure", "[ 1 -eq 2 ]; echo rc=$?"),
  shell("status.grep-no-match", "echo abc | grep x; echo rc=$?"),
  sh("status.sh-false", "false; echo rc=$?"),
  sh("status.sh-cd-missing", "cd /nonexistent-dir; echo rc=$?"),
  sh("status.sh-exit", "echo a; exit 3"),
  sh("status.sh-command-not-found", "no-such-command-xyz; echo rc=$?"),
  sh("status.sh-pipefail", "set -o pipefail; false | true; echo rc=$?"),
  // Pipes and redirections.
  shell("pipe.simple", "printf 'b\\na\\nc\\n' | sort"),
  shell("pipe.chain", "seq 1 10 | grep 1 | wc -l"),
  shell("pipe.stderr-to-stdout", "ls /nonexistent 2>&1 | wc -l"),
  shell("redirect.file", "echo hello > out.txt; cat out.txt"),
  shell("redirect.append", "echo a > f; echo b >> f; cat f"),
  shell("redirect.stderr-file", "ls /nonexistent 2> err.txt; wc -l < err.txt"),
  shell("redirect.both", "{ echo out; echo err >&2; } > all.txt 2>&1; sort all.txt"),
  shell("redirect.dev-null", "echo hidden > /dev/null; echo shown"),
  shell("redirect.stderr", "echo to-stderr >&2"),
  shell("redirect.stdout-and-stderr", "echo out; echo err >&2; echo out2"),
  shell("redirect.input", "printf 'x\\ny\\n' > in.txt; wc -l < in.txt"),
  shell("redirect.ampersand-greater", "ls /nonexistent &> both.txt; cat both.txt | wc -l"),
  shell("redirect.noclobber", "echo a > f; set -C; echo b > f; echo rc=$?; cat f"),
  // Here-docs and here-strings.
  shell("heredoc.plain", "cat <<EOF\nline one\nline two\nEOF"),
  shell("heredoc.expanded", "name=world\ncat <<EOF\nhello $name\nEOF"),
  shell("heredoc.quoted", "cat <<'EOF'\nno $expansion here\nEOF"),
  shell("heredoc.tabs", "cat <<-EOF\n\tindented\nEOF"),
  shell("heredoc.to-file", "cat > config.ini <<EOF\n[main]\nkey=value\nEOF\ncat config.ini"),
  shell("heredoc.herestring", "tr a-z A-Z <<< 'shout'"),
  shell("heredoc.python", "python3 - <<'EOF'\nprint(sum(range(10)))\nEOF"),
  // Globbing.
  shell("glob.star", "touch a.txt b.txt c.log; echo *.txt"),
  shell("glob.question", "touch f1 f2 f10; echo f?"),
  shell("glob.no-match", "echo *.nomatch"),
  shell("glob.brackets", "touch x1 x2 x3; echo x[12]"),
  shell("glob.brace", "echo {a,b,c}-{1,2}"),
  shell("glob.sequence", "echo {1..5}"),
  shell("glob.for-loop", "touch p.py q.py; for f in *.py; do echo file:$f; done"),
  // Quoting.
  shell("quote.single", "echo 'a  b   $HOME'"),
  shell("quote.double", "x='a  b'; echo \"$x\"; echo $x"),
  shell("quote.escape", 'echo "quote: \\" dollar: \\$"'),
  shell("quote.ansi-c", "echo $'tab\\tnewline\\nend'"),
  shell("quote.empty-arg", "printf '[%s]\\n' '' a"),
  shell("quote.nested-substitution", 'echo "$(echo "inner $(echo deep)")"'),
  // Variables and parameter expansion.
  shell("var.assign", "x=5; echo $x"),
  shell("var.default", "echo ${MISSING:-fallback}"),
  shell("var.length", "s=hello; echo ${#s}"),
  shell("var.substring", "s=abcdef; echo ${s:1:3}"),
  shell("var.strip-suffix", "f=archive.tar.gz; echo ${f%.gz} ${f%%.*}"),
  shell("var.strip-prefix", "p=/a/b/c.txt; echo ${p##*/} ${p#/}"),
  shell("var.replace", "s=foo-bar-baz; echo ${s//-/_}"),
  shell("var.upper-lower", "s=Hello; echo ${s^^} ${s,,}"),
  shell("var.array", "a=(one two three); echo ${a[1]} ${#a[@]}"),
  shell("var.array-loop", 'a=(x y z); for i in "${a[@]}"; do echo $i; done'),
  shell("var.export-child", "export GREETING=hi; bash -c 'echo $GREETING'"),
  shell("var.unexported-child", "LOCAL_ONLY=1; bash -c 'echo [${LOCAL_ONLY}]'"),
  shell("var.across-lines", "count=1\ncount=$((count + 1))\necho $count"),
  shell("var.prefix-assignment", "FOO=bar env | grep ^FOO="),
  shell("var.readonly", "readonly R=1; R=2; echo rc=$? R=$R"),
  shell("var.unset", "x=1; unset x; echo [${x-unset}]"),
  shell("var.positional", 'set -- a b c; echo $# $2 "$@"'),
  // Functions.
  shell("function.define-call", 'greet() { echo "hello $1"; }\ngreet world'),
  shell("function.return-value", "add() { echo $(( $1 + $2 )); }; r=$(add 2 3); echo $r"),
  shell("function.local", "x=global; f() { local x=local; echo $x; }; f; echo $x"),
  shell("function.recursion", "fact() { if [ $1 -le 1 ]; then echo 1; else echo $(( $1 * $(fact $(( $1 - 1 ))) )); fi; }; fact 5"),
  shell("function.later-line", "f() {\n  echo multi-line\n}\nf\nf"),
  // cd and the working directory.
  shell("cd.subdir", "mkdir -p a/b; cd a/b; basename $(pwd)"),
  shell("cd.persists", "mkdir d\ncd d\ntouch here\ncd ..\nls d"),
  shell("cd.dash", "mkdir -p x; cd x; cd - > /dev/null; basename $(pwd)"),
  shell("cd.in-subshell", "mkdir s; (cd s; basename $(pwd)); basename $(pwd) | grep -c s"),
  shell("cd.home", "cd; pwd"),
  // test and [.
  shell("test.file-exists", "touch present; [ -f present ] && echo yes; [ -f absent ] || echo no"),
  shell("test.directory", "mkdir dir; [ -d dir ] && echo dir"),
  shell("test.string", '[ "abc" = "abc" ] && echo equal; [ -z "" ] && echo empty; [ -n x ] && echo nonempty'),
  shell("test.numbers", "[ 3 -gt 2 ] && echo gt; [ 2 -le 2 ] && echo le; test 1 -ne 1 || echo ne-false"),
  shell("test.double-bracket", "[[ hello == h* ]] && echo match; [[ abc =~ ^a.c$ ]] && echo regex"),
  shell("test.invalid-number", "[ abc -eq 1 ]; echo rc=$?"),
  // Arithmetic.
  shell("arith.basic", "echo $((2 + 3 * 4)) $((10 / 3)) $((10 % 3)) $((2 ** 10))"),
  shell("arith.variables", "a=7; b=3; echo $((a - b)) $((a * b))"),
  shell("arith.increment", "i=0; ((i++)); ((i += 5)); echo $i"),
  shell("arith.division-by-zero", "echo $((1 / 0)); echo rc=$?"),
  shell("arith.let", "let x=4*5; echo $x"),
  shell("arith.comparison", "(( 5 > 3 )) && echo bigger; (( 0 )); echo rc=$?"),
  shell("arith.negative", "echo $(( -7 / 2 )) $(( -7 % 2 ))"),
  // printf.
  shell("printf.format", "printf '%s=%d\\n' apples 3 pears 5"),
  shell("printf.padding", "printf '[%5s][%-5s][%05d]\\n' ab cd 42"),
  shell("printf.float", "printf '%.2f\\n' 3.14159"),
  shell("printf.hex", "printf '%x %o %X\\n' 255 8 171"),
  shell("printf.no-newline", "printf 'no newline'"),
  shell("printf.escapes", "printf 'a\\tb\\n'"),
  shell("printf.percent", "printf '100%%\\n'"),
  // read.
  shell("read.line", "echo 'first second' | { read a b; echo $b $a; }"),
  shell("read.loop", "printf '1\\n2\\n3\\n' | while read n; do echo n=$n; done"),
  shell("read.stdin", "read line; echo got:$line", { stdin: "from stdin\n" }),
  shell("read.ifs", "echo 'a:b:c' | { IFS=: read x y z; echo $z $y $x; }"),
  shell("read.raw", "echo 'back\\slash' | { read -r v; echo \"$v\"; }"),
  shell("read.file-loop", "printf 'k1=v1\\nk2=v2\\n' > kv; while IFS='=' read -r k v; do echo \"$v<-$k\"; done < kv"),
  // xargs.
  shell("xargs.echo", "printf 'a\\nb\\nc\\n' | xargs echo"),
  shell("xargs.n1", "echo 1 2 3 | xargs -n1 echo item"),
  shell("xargs.replace", "printf 'x\\ny\\n' | xargs -I{} echo '<{}>'"),
  shell("xargs.touch", "echo f1 f2 | xargs touch; ls f1 f2"),
  // find.
  shell("find.name", "mkdir -p src/sub; touch src/a.py src/sub/b.py src/c.txt; find src -name '*.py' | sort"),
  shell("find.type-d", "mkdir -p t/u/v; find t -type d | sort"),
  shell("find.missing", "find /nonexistent-path; echo rc=$?"),
  shell("find.exec", "mkdir e; touch e/one e/two; find e -type f -exec echo found {} \\; | sort"),
  // grep.
  shell("grep.basic", "printf 'apple\\nbanana\\ncherry\\n' | grep an"),
  shell("grep.count-ignore-case", "printf 'A\\na\\nb\\n' | grep -ci a"),
  shell("grep.invert", "printf '1\\n2\\n3\\n' | grep -v 2"),
  shell("grep.line-numbers", "printf 'x\\ny\\nx\\n' > g; grep -n x g"),
  shell("grep.recursive", "mkdir -p r/s; echo needle > r/s/f; echo hay > r/g; grep -r needle r"),
  shell("grep.extended", "echo 'abc123' | grep -Eo '[0-9]+'"),
  shell("grep.quiet", "echo hello | grep -q hell && echo found"),
  shell("grep.missing-file", "grep x /nonexistent-file; echo rc=$?"),
  shell("grep.files-with-matches", "echo a > m1; echo b > m2; grep -l a m1 m2"),
  // sed.
  shell("sed.substitute", "echo 'hello world' | sed 's/world/there/'"),
  shell("sed.global", "echo 'a-b-c' | sed 's/-/+/g'"),
  shell("sed.delete", "printf '1\\n2\\n3\\n' | sed '2d'"),
  shell("sed.print-range", "seq 1 10 | sed -n '3,5p'"),
  shell("sed.in-place", "echo 'version=1' > v.cfg; sed -i 's/1/2/' v.cfg; cat v.cfg"),
  shell("sed.extended-groups", "echo 'john smith' | sed -E 's/(\\w+) (\\w+)/\\2, \\1/'"),
  // awk.
  shell("awk.field", "echo 'a b c' | awk '{print $2}'"),
  shell("awk.sum", "printf '1\\n2\\n3\\n' | awk '{s += $1} END {print s}'"),
  shell("awk.separator", "echo 'k:v:w' | awk -F: '{print $3, $1}'"),
  shell("awk.condition", "printf '5\\n15\\n25\\n' | awk '$1 > 10'"),
  shell("awk.printf", "echo 3.14159 | awk '{printf \"%.1f\\n\", $1}'"),
  shell("awk.nr", "printf 'a\\nb\\n' | awk '{print NR\": \"$0}'"),
  // sort, uniq, head, tail, wc, cut, tr.
  shell("sort.numeric", "printf '10\\n9\\n100\\n' | sort -n"),
  shell("sort.reverse-unique", "printf 'b\\na\\nb\\nc\\n' | sort -ru"),
  shell("sort.key", "printf 'x 3\\ny 1\\nz 2\\n' | sort -k2 -n"),
  shell("uniq.count", "printf 'a\\na\\nb\\n' | uniq -c"),
  shell("head.lines", "seq 1 100 | head -n 3"),
  shell("head.bytes", "echo abcdef | head -c 3"),
  shell("tail.lines", "seq 1 100 | tail -n 2"),
  shell("tail.from", "seq 1 5 | tail -n +4"),
  shell("wc.all", "printf 'one two\\nthree\\n' > w; wc w"),
  shell("wc.lines-words-chars", "printf 'one two\\nthree\\n' | wc -l; printf 'one two\\n' | wc -w; printf 'abc' | wc -c"),
  shell("cut.fields", "echo 'a,b,c' | cut -d, -f2"),
  shell("tr.delete", "echo 'h-e-l-l-o' | tr -d '-'"),
  // tee, env, misc coreutils.
  shell("tee.file", "echo teed | tee t.txt; cat t.txt"),
  shell("tee.append", "echo 1 > t; echo 2 | tee -a t > /dev/null; cat t"),
  shell("env.variable", "MY_VAR=abc env | grep '^MY_VAR='"),
  shell("env.home", "echo $HOME"),
  shell("env.printenv-missing", "printenv NO_SUCH_VARIABLE_XYZ; echo rc=$?"),
  shell("misc.basename-dirname", "basename /a/b/c.txt .txt; dirname /a/b/c.txt"),
  shell("misc.seq", "seq 3; seq 2 2 6"),
  shell("misc.mkdir-p-ls", "mkdir -p one/two/three && ls one/two"),
  shell("misc.cp-mv-rm", "echo data > a; cp a b; mv b c; rm a; ls"),
  shell("misc.cat-missing", "cat /nonexistent-file; echo rc=$?"),
  shell("misc.rm-missing", "rm missing-file; echo rc=$?"),
  shell("misc.rm-force", "rm -f missing-file; echo rc=$?"),
  shell("misc.true-false-colon", ": ; true; echo $?"),
  shell("misc.case", "x=banana; case $x in ap*) echo apple;; ba*) echo banana;; *) echo other;; esac"),
  shell("misc.while-counter", "i=0; while [ $i -lt 3 ]; do echo $i; i=$((i+1)); done"),
  shell("misc.until", "n=3; until [ $n -eq 0 ]; do echo $n; n=$((n-1)); done"),
  shell("misc.for-c-style", "for ((i=0; i<3; i++)); do echo i$i; done"),
  shell("misc.break-continue", "for i in 1 2 3 4 5; do [ $i -eq 2 ] && continue; [ $i -eq 4 ] && break; echo $i; done"),
  shell("misc.command-v", "command -v ls > /dev/null && echo has-ls"),
  shell("misc.echo-flags", "echo -n no-newline; echo; echo -e 'a\\tb'"),
  shell("misc.date-format", "date -d @0 -u +%Y-%m-%d"),
  shell("misc.base64", "echo -n hello | base64; echo aGVsbG8= | base64 -d; echo"),
  shell("misc.md5", "echo -n abc | md5sum"),
  shell("misc.sha256", "echo -n abc | sha256sum"),
  shell("misc.json-jq-free", "echo '{\"a\": 1}' | python3 -c 'import json,sys; print(json.load(sys.stdin)[\"a\"])'"),
  shell("misc.unicode", "echo 'héllo wörld ✓'; echo 'naïve' | wc -c"),
  shell("misc.large-output", "seq 1 20000 | tail -n 1; seq 1 20000 | wc -c"),
  shell("misc.output-cap", "seq 1 20000", { outputLimitBytes: 65_536 }),
  // Background jobs and wait.
  shell("background.wait", "(sleep 0.2; echo job) &\necho main\nwait\necho after"),
  shell("background.two-jobs", "(sleep 0.3; echo slow) &\n(echo fast) &\nwait\necho done"),
  shell("background.wait-status", "(exit 3) &\nwait\necho rc=$?"),
  shell("background.variable-seen", "x=visible\n(echo job sees $x) &\nwait"),
  shell("background.file", "(echo written > bg.txt) &\nwait\ncat bg.txt"),
  // Traps (top-level EXIT traps run when the script ends).
  shell("trap.exit", "trap 'echo bye' EXIT; echo hi"),
  shell("trap.function-cleanup", "cleanup() { echo cleaning up; }\ntrap cleanup EXIT\necho working\nexit 3"),
  shell("trap.status-in-handler", "trap 'echo status=$?' EXIT; false"),
  shell("trap.reset", "trap 'echo never' EXIT; trap - EXIT; echo reset"),
  shell("trap.set-e", "set -e; trap 'echo trapped' EXIT; false; echo unreachable"),
  shell("trap.in-subshell", "(trap 'echo sub-exit' EXIT; echo in-sub); echo after"),
  // Bytes: what reaches stdout when output is not text.
  shell("bytes.printf-utf8-escapes", "printf '\\303\\251\\n'"),
  shell("bytes.printf-invalid-utf8", "printf '\\377\\376\\n'"),
  shell("bytes.printf-high-octal-piped", "printf '\\377' | base64"),
  shell("bytes.base64-roundtrip", "printf 'AAEC/w==' | base64 -d | base64"),
  shell("bytes.binary-file-to-stdout", "printf 'AAEC/w==' | base64 -d > blob.bin; cat blob.bin"),
  shell("bytes.python-binary-stdout", "python3 -c 'import sys; sys.stdout.buffer.write(bytes([0, 200, 255]))' | base64"),
  // Python one-shot through commands.
  shell("python.print", "python3 -c 'print(\"hello\")'"),
  shell("python.stdout-stderr", 'python3 -c \'import sys; print("out"); print("err", file=sys.stderr)\''),
  shell("python.exception", "python3 -c 'raise ValueError(\"boom\")'; echo rc=$?"),
  shell("python.exit-code", "python3 -c 'import sys; sys.exit(3)'"),
  shell("python.exit-message", "python3 -c 'import sys; sys.exit(\"fatal: bad\")'; echo rc=$?"),
  shell("python.syntax-error", "python3 -c 'print(' 2>&1 | tail -n 1"),
  shell("python.file-io", 'python3 -c \'open("p.txt", "w").write("from python\\n")\'; cat p.txt'),
  shell("python.reads-shell-file", "echo shell-data > s.txt; python3 -c 'print(open(\"s.txt\").read().strip().upper())'"),
  shell(
    "python.stdlib",
    'python3 -c \'import json, math, re, collections; print(json.dumps({"pi": round(math.pi, 3)}), re.sub("a", "b", "aaa"), collections.Counter("aab")["a"])\'',
  ),
  shell("python.unicode", "python3 -c 'print(\"héllo ✓ 日本\")'"),
  shell("python.stdin", "python3 -c 'import sys; print(sys.stdin.read().upper())'", { stdin: "piped" }),
  shell("python.pipe-into", "printf '3\\n4\\n' | python3 -c 'import sys; print(sum(int(l) for l in sys.stdin))'"),
  shell("python.argv", "python3 -c 'import sys; print(sys.argv[1:])' a b"),
  shell("python.env", "export TOKEN=xyz; python3 -c 'import os; print(os.environ[\"TOKEN\"])'"),
  shell("python.cwd", "mkdir w; cd w; python3 -c 'import os; print(os.path.basename(os.getcwd()))'"),
  shell("python.script-file", "printf 'import sys\\nprint(\"script\", len(sys.argv))\\n' > s.py; python3 s.py x"),
  shell("python.large-output", "python3 -c 'print(\"x\" * 100000)' | wc -c"),
  shell("python.traceback-last-line", "python3 -c 'import json; json.loads(\"{bad\")' 2>&1 | tail -n 1"),
  // runCode (Python).
  code("code.print", "print('hello from code')"),
  code("code.stdout-stderr-order", "import sys\nprint('one')\nprint('two', file=sys.stderr)\nprint('three')"),
  code("code.exception", "raise KeyError('missing')"),
  code("code.zero-division", "1/0"),
  code("code.exit-zero", "import sys\nprint('before')\nsys.exit(0)"),
  code("code.exit-nonzero", "import sys\nsys.exit(3)"),
  code("code.file-io", "open('code-file-io.txt', 'w').write('abc')\nprint(open('code-file-io.txt').read())"),
  code(
    "code.listdir",
    "import os\nos.makedirs('code-listdir/d/e', exist_ok=True)\nopen('code-listdir/f.txt', 'w').close()\nprint(sorted(os.listdir('code-listdir')))",
  ),
  code(
    "code.stdlib",
    "import json, itertools, datetime\nprint(json.dumps(list(itertools.islice(itertools.count(), 3))))\nprint(datetime.date(2024, 1, 2).isoformat())",
  ),
  code("code.unicode", "print('ünïcödé ✓ 日本語')"),
  code("code.large-output", "print('y' * 200000)"),
  code("code.many-lines", "for i in range(2000):\n    print(i)"),
  code("code.env-home", "import os\nprint(os.environ.get('HOME'))"),
  code("code.name-error", "print(undefined_name)"),
  code("code.syntax-error", "def broken(:\n    pass"),
  code("code.return-value-not-printed", "1 + 1"),
  // Code contexts (cells in one context on the fake; one joined program on Docker).
  context("context.variable", ["x = 41", "x += 1", "print(x)"]),
  context("context.function", ["def double(n):\n    return n * 2", "print(double(21))"]),
  context("context.import", ["import math", "print(math.sqrt(16))"]),
  context("context.file", ["f = open('context-file.txt', 'w')\nf.write('kept')\nf.close()", "print(open('context-file.txt').read())"]),
  context("context.class", [
    "class Counter:\n    def __init__(self):\n        self.n = 0\n    def tick(self):\n        self.n += 1\n        return self.n",
    "c = Counter()\nc.tick()",
    "print(c.tick())",
  ]),
  context("context.list-accumulate", ["items = []", "items.append('a')", "items.append('b')\nprint(items)"]),
];
