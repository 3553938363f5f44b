#!/usr/bin/env bash
# CLI tests (issue 13): `cli_test.sh CASE REALIZAR MODEL` runs one case in a fresh temporary folder;
# each asserts exit codes, messages and file contents, and prints FAIL with the reason.
set -u
name=$1 R=$2 MODEL=$3
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cd "$T" || exit 1

fail() { echo "FAIL [$name]: $*"; exit 1; }
# expect RC CMD...: runs CMD with stdout in out.txt, stderr in err.txt; fails unless it exits RC.
expect() {
  local want=$1 rc
  shift
  "$@" >out.txt 2>err.txt
  rc=$?
  [ "$rc" -eq "$want" ] || fail "'$*' exited $rc, want $want; stderr: $(cat err.txt)"
}
err_has() { grep -qE -- "$1" err.txt || fail "stderr lacks /$1/: $(cat err.txt)"; }
out_has() { grep -qE -- "$1" out.txt || fail "stdout lacks /$1/: $(cat out.txt)"; }
no_temp_left() { [ -z "$(ls -A | grep '\.tmp\.')" ] || fail "temporary files left: $(ls -A)"; }

case $name in
# 1. Writers replace files by rename: the old inode (what a running process has mapped) is never rewritten.
synth_replaces_by_rename)
  cp "$MODEL" m.gguf && ln m.gguf still-mapped.gguf
  expect 0 "$R" synth --preset tiny --quant q8_0 --out m.gguf
  cmp -s still-mapped.gguf "$MODEL" || fail "synth rewrote the old file in place (a run mapping it would get SIGBUS)"
  expect 0 "$R" info -m m.gguf
  no_temp_left ;;
failed_write_keeps_old_file)
  echo old >t.gguf
  (trap '' XFSZ; ulimit -f 16; "$R" synth --preset tiny --quant f32 --out t.gguf >out.txt 2>err.txt; echo $? >rc.txt)
  [ "$(cat rc.txt)" = 1 ] || fail "synth past the file size limit exited $(cat rc.txt), want 1"
  err_has "t.gguf: write failed after [0-9]+ bytes: File too large; the file was not changed"
  [ "$(cat t.gguf)" = old ] || fail "the old file was damaged"
  no_temp_left ;;
logits_refuses_to_overwrite_model)
  cp "$MODEL" m.gguf
  expect 2 "$R" logits -m m.gguf --tokens 1,2 --out ./m.gguf
  err_has "--out: ./m.gguf is the model file"
  cmp -s m.gguf "$MODEL" || fail "the model was overwritten"
  expect 0 "$R" logits -m m.gguf --tokens 1,2 --out l.f32
  [ "$(stat -c %s l.f32)" = 4096 ] || fail "l.f32 has $(stat -c %s l.f32) bytes, want 2 x 512 x 4"
  ln -s l.f32 link.f32  # a symlink's target is replaced, the link stays
  expect 0 "$R" logits -m m.gguf --tokens 1,2,3 --out link.f32
  [ -L link.f32 ] && [ "$(stat -c %s l.f32)" = 6144 ] || fail "the symlink was replaced or its target not written"
  expect 0 "$R" logits -m m.gguf --tokens 1 --out /dev/null  # not a regular file: written, never replaced
  [ -c /dev/null ] || fail "/dev/null is no longer a device"
  no_temp_left ;;
truncated_model_names_file)
  cp "$MODEL" m.gguf
  "$R" bench -m m.gguf -p 32 -n 32 -r 1000000 >out.txt 2>err.txt &
  pid=$!
  for _ in $(seq 300); do grep -q "backend" err.txt && break; kill -0 $pid 2>/dev/null || break; sleep 0.1; done
  : >m.gguf  # truncate in place while the bench reads its mapping
  for _ in $(seq 300); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done
  kill -0 $pid 2>/dev/null && { kill $pid; fail "the bench kept running on a truncated model"; }
  wait $pid
  rc=$?
  [ $rc -eq 1 ] || fail "exited $rc, want 1 (135 is a bare SIGBUS); stderr: $(cat err.txt)"
  err_has "error: m.gguf: the model file changed under this run" ;;
full_stdout_is_error)
  "$R" run -m "$MODEL" -p "Once" -n 8 --temp 0 >/dev/full 2>err.txt
  [ $? -eq 1 ] || fail "run >/dev/full did not exit 1"
  err_has "writing to standard output failed: No space left on device"
  "$R" tokenize -m "$MODEL" --text hi >/dev/full 2>err.txt
  [ $? -eq 1 ] || fail "tokenize >/dev/full did not exit 1"
  err_has "writing to standard output failed" ;;
closed_stdout_is_error)
  "$R" run -m "$MODEL" -p "Once" -n 8 --temp 0 >&- 2>err.txt
  [ $? -eq 1 ] || fail "run with stdout closed did not exit 1"
  err_has "writing to standard output failed: Bad file descriptor" ;;
# 2. TRUENO_THREADS is honoured by every command, -t overrides it; bad values name the variable.
threads_env_honoured)
  TRUENO_THREADS=3 expect 0 "$R" bench -m "$MODEL" -p 8 -n 8 -r 1 --json
  out_has '"threads": 3'
  TRUENO_THREADS=3 expect 0 "$R" run -m "$MODEL" -p "Once" -n 4 --temp 0
  err_has "threads: 3 "
  TRUENO_THREADS=3 expect 0 "$R" run -m "$MODEL" -p "Once" -n 4 --temp 0 -t 1
  err_has "threads: 1 " ;;
threads_env_invalid)
  for v in 0 -2 abc 4x; do
    for cmd in "run -p Once -n 4" "bench -p 8 -n 8 -r 1" "logits --tokens 1,2 --out l.f32" "parity" "info"; do
      TRUENO_THREADS=$v expect 1 "$R" $cmd -m "$MODEL"
      err_has "TRUENO_THREADS='$v': expected an integer from 1 to"
    done
  done ;;
backend_env_invalid)
  for cmd in "run -p Once -n 4" "info" "backends"; do
    TRUENO_BACKEND=bogus expect 1 "$R" $cmd $([ "$cmd" = backends ] || echo -m "$MODEL")
    err_has "TRUENO_BACKEND=bogus: unknown backend 'bogus'"
  done ;;
# 3. Numbers: out of range is a usage error (exit 2) naming the option and the range in plain numbers.
numbers_are_checked)
  check() {  # check "MESSAGE" ARGS...: exit 2, MESSAGE on stderr, no number of 20+ digits
    local msg=$1
    shift
    expect 2 "$R" "$@"
    err_has "$msg"
    grep -qE '[0-9]{21}' err.txt && fail "unreadable number in: $(cat err.txt)"
  }
  check "--repetitions: 0 is out of range: expected an integer from 1 to 1000000" bench -m "$MODEL" -r 0
  check "--ctx-size: -1 is out of range: expected an integer from 0 to 16777216" run -m "$MODEL" -p x -c -1
  check "--ctx-size: 2147483647 is out of range: expected an integer from 0 to 16777216" run -m "$MODEL" -p x -c 2147483647
  check "--ctx-size: '12x' is not a number: expected an integer from 0 to" run -m "$MODEL" -p x -c 12x
  check "--n-prompt: -5 is out of range: expected an integer from 0 to" bench -m "$MODEL" -p -5
  check "--threads: 0x is not a number|--threads: '0x' is not a number" run -m "$MODEL" -p x -t 0x
  check "--temp: -1 is out of range: expected a number from 0 to 100" run -m "$MODEL" -p x --temp -1
  check "--temp: 'nan' is not a number" run -m "$MODEL" -p x --temp nan
  check "--top-p: 0 is out of range: expected a number greater than 0 and at most 1" run -m "$MODEL" -p x --top-p 0
  check "--min-p: 1 is out of range: expected a number at least 0 and less than 1" run -m "$MODEL" -p x --min-p 1
  check "--seed: -1 is out of range: expected an integer from 0 to 18446744073709551615" run -m "$MODEL" -p x --seed -1
  check "--seed: -1 is out of range" synth --out x.gguf --seed -1 ;;
context_past_training_warns)
  expect 0 "$R" run -m "$MODEL" -p "Once" -n 2 --temp 0 -c 4096
  err_has "warning: -c 4096 is larger than the model's training context \\(2048 positions\\)"
  expect 0 "$R" run -m "$MODEL" -p "Once" -n 2 --temp 0 -c 2048
  grep -q warning err.txt && fail "warned at -c 2048: $(cat err.txt)"
  true ;;
kv_alloc_failure_names_sizes)
  (ulimit -v 1000000; "$R" run -m "$MODEL" -p "Once" -n 2 --temp 0 -c 4000000 >out.txt 2>err.txt; echo $? >rc.txt)
  [ "$(cat rc.txt)" = 1 ] || fail "exited $(cat rc.txt), want 1: $(cat err.txt)"
  err_has "out of memory: the KV cache for 4000000 positions needs 2.38 GiB \\(640 bytes per position" ;;
# 4. llama.cpp habits.
n_minus_one_until_context)
  expect 0 "$R" run -m "$MODEL" -p "Once upon a time" -n -1 -c 32 --temp 0
  err_has "the context is full \(32 positions: 5 prompt \+ 28 generated\)"
  out_has "^Once upon a time, there was a little girl"
  expect 0 "$R" run -m "$MODEL" -p "Once upon a time" -n 100 -c 48 --temp 0 --json
  out_has '"stop":"context"'
  err_has "the context is full \(48 positions" ;;
prompt_from_file_and_stdin)
  expect 0 "$R" run -m "$MODEL" -p "Once upon a time" -n 12 --temp 0
  mv out.txt want.txt
  printf 'Once upon a time' >prompt.txt
  expect 0 "$R" run -m "$MODEL" -f prompt.txt -n 12 --temp 0
  cmp -s out.txt want.txt || fail "-f: '$(cat out.txt)' differs from -p: '$(cat want.txt)'"
  "$R" run -m "$MODEL" -p - -n 12 --temp 0 <prompt.txt >out.txt 2>err.txt || fail "-p - failed: $(cat err.txt)"
  cmp -s out.txt want.txt || fail "-p -: '$(cat out.txt)' differs from -p: '$(cat want.txt)'"
  expect 1 "$R" run -m "$MODEL" -f missing.txt
  err_has "--file missing.txt: cannot open: No such file or directory"
  expect 1 "$R" run -m "$MODEL" -f .
  err_has "--file .: is a directory"
  expect 2 "$R" run -m "$MODEL" -p x -f prompt.txt
  expect 2 "$R" run -m "$MODEL"
  err_has "--prompt or --file" ;;
text_file_directory_is_error)
  expect 1 "$R" tokenize -m "$MODEL" --text-file .
  err_has "--text-file .: is a directory, not a text file"
  printf 'Hello' >t.txt
  expect 0 "$R" tokenize -m "$MODEL" --text-file t.txt
  [ -n "$(cat out.txt)" ] || fail "no ids for a text file" ;;
stop_strings)
  expect 0 "$R" run -m "$MODEL" -p "Once upon a time" -n 40 --temp 0 --stop Lily --stop park
  [ "$(cat out.txt)" = "Once upon a time, there was a little girl named " ] || fail "stdout: '$(cat out.txt)'"
  expect 0 "$R" run -m "$MODEL" -p "Once upon a time" -n 40 --temp 0 --stop "outside in" --json
  out_has '"stop":"stop"'
  out_has '"text":", there was a little girl named Lily. She loved to play ","' ;;
seed_is_random_and_printed)
  expect 0 "$R" run -m "$MODEL" -p "Once upon a time" -n 24
  seed=$(sed -n 's/^realizar: seed \([0-9]*\) (random.*/\1/p' err.txt)
  [ -n "$seed" ] || fail "no random seed printed: $(cat err.txt)"
  mv out.txt first.txt
  expect 0 "$R" run -m "$MODEL" -p "Once upon a time" -n 24
  grep -q "seed $seed " err.txt && fail "two runs drew the same seed $seed"
  expect 0 "$R" run -m "$MODEL" -p "Once upon a time" -n 24 --seed "$seed"
  cmp -s out.txt first.txt || fail "--seed $seed did not repeat the run: '$(cat out.txt)' vs '$(cat first.txt)'"
  err_has "^realizar: seed $seed$" ;;
help_shows_defaults)
  expect 0 "$R" run --help
  out_has "-n,--n-predict INT:-1\.\.2147483647=128"
  out_has "--temp FLOAT:\[0, 100\]=0\.8"
  out_has "--seed UINT:0\.\.2\^64-1=random"
  out_has "-f,--file"
  out_has "--stop TEXT"
  expect 0 "$R" bench --help
  out_has "-r,--repetitions INT:1\.\.1000000=3" ;;
run_json)
  expect 0 "$R" run -m "$MODEL" -p "Once upon a time" -n 8 --temp 0 --json
  [ "$(wc -l <out.txt)" = 1 ] || fail "--json printed $(wc -l <out.txt) lines: $(cat out.txt)"
  for key in '"text":", there was a little girl' '"tokens":\[[0-9]+(,[0-9]+){7}\]' '"backend":"[a-z0-9]+' \
             '"timings":\{' '"generation_tokens_per_second":' '"stop":"length"' '"n_prompt":5'; do
    out_has "$key"
  done
  if command -v python3 >/dev/null; then python3 -m json.tool out.txt >/dev/null || fail "not JSON: $(cat out.txt)"; fi ;;
# 3. `chat` (issue 16): two user lines, two replies; the second turn feeds only the new text (KV cache kept).
chat_two_turns)
  printf 'Once upon a time\nTell me more\n' >in.txt
  "$R" chat -m "$MODEL" --chat-template chatml -n 12 --temp 0 <in.txt >out.txt 2>err.txt
  rc=$?
  [ $rc -eq 0 ] || fail "chat exited $rc; stderr: $(cat err.txt)"
  err_has "chat template: builtin chatml"
  err_has "turn 1: 0 tokens reused from the cache, [0-9]+ new prompt tokens, [1-9][0-9]* generated"
  err_has "turn 2: [1-9][0-9]* tokens reused from the cache, [0-9]+ new prompt tokens, [1-9][0-9]* generated"
  [ "$(grep -c 'generated' err.txt)" = 2 ] || fail "want exactly two turns: $(cat err.txt)"
  [ -n "$(tr -d '[:space:]' <out.txt)" ] || fail "no reply text on stdout"
  # No template in the model and none given: an error naming the option.
  echo hi | "$R" chat -m "$MODEL" -n 4 >out.txt 2>err.txt
  [ $? -eq 1 ] || fail "chat without a template did not exit 1"
  err_has "has no tokenizer.chat_template; give one with --chat-template NAME\|FILE"
  # A template's own check (Mistral's alternation) stops the chat with its message and where.
  printf 'a\n' | "$R" chat -m "$MODEL" -n 4 --system S --chat-template mistral >out.txt 2>err.txt
  [ $? -eq 1 ] || fail "a raising template did not exit 1"
  err_has "chat template builtin mistral:1:[0-9]+: raise_exception: the template raised: Conversation roles must alternate" ;;
*) fail "unknown case" ;;
esac
echo "PASS [$name]"
