/**
 * Decides whether the Docker-backed tests can run. They are skipped with a message when Docker or the test image is
 * missing, unless SBX_REQUIRE contains "modal", in which case they fail.
 */
import { shouldSkipDockerTests } from "@sbx/emulator-kit/testing";

/** Image the tests run sandboxes on. */
export const testImage = process.env.SBX_MODAL_EMULATOR_IMAGE ?? "sbx-test/python:3.11";

/** True when the Docker-backed tests should be skipped. */
export const skipDockerTests = await shouldSkipDockerTests({ image: testImage, backend: "modal", label: "modal-emulator tests" });
