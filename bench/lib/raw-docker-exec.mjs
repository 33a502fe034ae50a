/**
 * Raw dockerode `docker exec` as the sandbox user (uid 10001): the baseline the benches compare sbx against. Runs
 * `command` (an argv array), drains its output and resolves with the exit code from the exec inspect.
 */
export async function rawDockerExec(container, command) {
  const exec = await container.exec({ Cmd: command, AttachStdout: true, AttachStderr: true, Tty: false, User: "10001:10001" });
  const stream = await exec.start({ hijack: false, stdin: false });
  await new Promise((resolve, reject) => {
    stream.on("data", () => {});
    stream.once("end", resolve);
    stream.once("error", reject);
  });
  for (;;) {
    const info = await exec.inspect();
    if (!info.Running) return info.ExitCode;
  }
}
