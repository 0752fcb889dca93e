// The keymap in force for components that print key hints: re-renders them when
// config.toml rebinds the prefix or a key.
import { useSyncExternalStore } from 'react';
import type { Keymap } from '../keys/prefix';
import type { Settings } from '../config/Settings';

/** The prefix letter and bindings in force (`settings.config`), kept current. */
export function useKeymap(settings: Settings): Keymap {
  return useSyncExternalStore(settings.subscribe, settings.getSnapshot).config;
}
