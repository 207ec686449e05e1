import { isRegistryKind, REGISTRY_KINDS, type RegistryKind } from '@cleveragents/contract';

/** docs/protocol.md §6.2: the kinds of definition the registry holds (the contract's). */
export { isRegistryKind, REGISTRY_KINDS, type RegistryKind };
