/**
 * Loads the authenticator of a configuration: reads horae.auth.tokens_file (the server
 * itself touches no files; see tsdb/server/auth.ts for the format) and warns when other
 * users can read it.
 */
import { readFileSync, statSync } from 'node:fs';
import type { TsdbConfig } from '../config.js';
import { AuthConfigError, tokenAuthOf } from '../server/auth.js';
import type { TokenAuth, TokensFile } from '../server/auth.js';

export function loadTokenAuth(config: Pick<TsdbConfig, 'authTokensFile' | 'authTokens'>,
  warn?: (msg: string) => void): TokenAuth | undefined {
  let file: TokensFile | undefined;
  if (config.authTokensFile !== '') {
    const path = config.authTokensFile;
    try {
      file = { path, text: readFileSync(path, 'utf8') };
      if ((statSync(path).mode & 0o004) !== 0) warn?.(`auth: ${path} is readable by every user (chmod 600 it)`);
    } catch (err) {
      throw new AuthConfigError(`cannot read tokens file ${path}: ${(err as Error).message}`);
    }
  }
  return tokenAuthOf(config, file);
}
