/** Registers `remote/openenv` (unlisted: it needs a server address, so menus and `serve --env all` skip it). */
import { registerEnv } from '../registry.ts';
import { REMOTE_ENV_DEFAULTS, REMOTE_ENV_ID, RemoteEnv } from './remoteEnv.ts';

registerEnv(REMOTE_ENV_ID, (kwargs) => new RemoteEnv(kwargs), { ...REMOTE_ENV_DEFAULTS }, { listed: false });

export { REMOTE_ENV_ID, RemoteEnv, readRemoteKwargs, type RemoteEnvConfig } from './remoteEnv.ts';
export { installRemoteSessions, type RemoteSession, type RemoteSessionMaker, type RemoteSessionOptions, type RemoteResult, type RemoteTool } from './session.ts';
