// The window's one trust prompt, wired to the sidecar's API (see project.ts).
import { api } from '../api/client';
import { ProjectPrompts } from './project';

/** The app's trust prompt and layout starter. */
export const projectPrompts = new ProjectPrompts({
  project: (terminal) => api.project(terminal),
  trust: (file, sha256) => api.trustProject(file, sha256),
  up: (near, layout) => api.startLayout(near, layout),
});
