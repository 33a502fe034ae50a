export { createSandboxProvider, fake, NOT_A_SECURITY_BOUNDARY_NOTE, type FakeSandboxProvider } from "./fake-provider.js";
export { FAKE_CAPABILITIES } from "./fake-capabilities.js";
export type {
  FakeSettings,
  CommandHandler,
  CommandHandlerCall,
  CommandHandlerResponse,
  CodeHandler,
  CodeHandlerCall,
  CodeHandlerResponse,
} from "./fake-settings.js";
export type { FakeCall, FakeCallKind } from "./call-record.js";
export type { FaultInjector } from "./fault-injector.js";
