/**
 * Command-line options of `horae` / `npm start -- ...`. Pure parsing, so it is unit-tested.
 */
export interface ServeArgs {
  readonly port: number;
  readonly host: string;
  readonly dataDir: string;
  readonly help: boolean;
}

export const USAGE = `Usage: horae [serve] [options]

Options:
  --port P          TCP port for HTTP (default 4242)
  --host H          address to bind (default 127.0.0.1)
  --data-dir D      directory of the embedded store (default ./data)
  -h, --help        show this help
`;

export class ArgsError extends Error {
  override readonly name = 'ArgsError';
}

export function parseArgs(argv: readonly string[]): ServeArgs {
  let port = 4242;
  let host = '127.0.0.1';
  let dataDir = './data';
  let help = false;
  const args = [...argv];
  if (args[0] === 'serve') args.shift();
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const eq = a.indexOf('=');
    const name = a.startsWith('--') && eq > 0 ? a.slice(0, eq) : a;
    const value = (): string => {
      if (a.startsWith('--') && eq > 0) return a.slice(eq + 1);
      const v = args[++i];
      if (v === undefined) throw new ArgsError(`${name} needs a value`);
      return v;
    };
    switch (name) {
      case '--port': {
        const v = value();
        const p = Number(v);
        if (!Number.isInteger(p) || p < 0 || p > 65535) throw new ArgsError(`--port must be an integer in 0..65535, got ${JSON.stringify(v)}`);
        port = p;
        break;
      }
      case '--host':
        host = value();
        break;
      case '--data-dir':
        dataDir = value();
        break;
      case '-h':
      case '--help':
        help = true;
        break;
      default:
        throw new ArgsError(`unknown option ${JSON.stringify(a)}`);
    }
  }
  return { port, host, dataDir, help };
}
