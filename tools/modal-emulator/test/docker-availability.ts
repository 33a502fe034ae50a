/**
 * Decides whether the Docker-backed tests can run. They are skipped with a message when Docker or the test image is
 * missing, unless SBX_REQUIRE contains "modal", in which case they fail.
 */
import Docker from "dockerode";

/** Image the tests run sandboxes on. */
export const testImage = process.env.SBX_MODAL_EMULATOR_IMAGE ?? "sbx-test/python:3.11";

async function probe(): Promise<string | undefined> {
  const docker = new Docker();
  try {
    await docker.ping();
  } catch (error) {
    return `Docker is not reachable (${(error as Error).message})`;
  }
  try {
    await docker.getImage(testImage).inspect();
  } catch {
    return `image ${testImage} is not present (built by .ci/provision.sh; the emulator never pulls)`;
  }
  return undefined;
}

const reason = await probe();
const required = (process.env.SBX_REQUIRE ?? "").split(",").includes("modal");
if (reason && required) throw new Error(`SBX_REQUIRE contains "modal" but ${reason}`);
if (reason) console.warn(`[modal-emulator tests] skipped: ${reason}`);

/** True when the Docker-backed tests should be skipped. */
export const skipDockerTests = reason !== undefined;
