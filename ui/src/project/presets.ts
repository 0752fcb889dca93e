// The viewport presets of a browser pane's project: those of the `.porthole.toml` of the
// terminal serving the pane's port (project over user over built-in, merged by the sidecar).
import { useEffect, useState } from 'react';
import { api } from '../api/client';
import { loopbackPort, parsePresets, type Preset } from './project';

/**
 * The presets for a browser pane at `url`, asked when the hook mounts (the Display menu
 * opens): null while asking, for a URL that is not loopback, when no terminal serves that
 * port or no project file is found for it, or when asking fails (the caller shows the
 * user's and built-in presets then).
 */
export function useProjectPresets(url: string): Preset[] | null {
  const [presets, setPresets] = useState<Preset[] | null>(null);
  useEffect(() => {
    const port = loopbackPort(url);
    if (port === null) return;
    let live = true;
    api.projectForPort(port).then(
      (v) => live && setPresets(parsePresets(v)),
      () => undefined,
    );
    return () => {
      live = false;
    };
  }, [url]);
  return presets;
}
