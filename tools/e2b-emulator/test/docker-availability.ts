/**
 * Decides whether the Docker-backed tests can run. They are skipped with a message when Docker or the test image is
 * missing, unless SBX_REQUIRE contains "e2b", in which case they fail.
 */
import { shouldSkipDockerTests } from "@sbx/emulator-kit/testing";

/** Image the tests run sandboxes on. */
export const testImage = process.env.SBX_E2B_EMULATOR_IMAGE ?? "sbx-test/python:3.11";

/** True when the Docker-backed tests should be skipped. */
export const skipDockerTests = await shouldSkipDockerTests({ image: testImage, backend: "e2b", label: "e2b-emulator tests" });
