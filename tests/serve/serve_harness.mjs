// Starts `realizar serve` on a free loopback port and returns {url, proc, stderr(), stop()}.
import { spawn } from 'node:child_process';

export async function startServer(bin, model, extraArgs = []) {
  const proc = spawn(bin, ['serve', '-m', model, '--port', '0', ...extraArgs], { stdio: ['ignore', 'inherit', 'pipe'] });
  let err = '';
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('server did not start in 20 s:\n' + err)), 20000);
    proc.stderr.on('data', (d) => {
      err += d;
      const m = /listening on (http:\/\/[0-9.]+:[0-9]+)/.exec(err);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    proc.on('exit', (code) => reject(new Error(`server exited ${code} before listening:\n${err}`)));
  });
  const exited = new Promise((resolve) => proc.on('exit', (code, signal) => resolve({ code, signal })));
  return {
    url,
    proc,
    exited,
    stderr: () => err,
    async stop(signal = 'SIGTERM') {
      proc.kill(signal);
      return exited;
    },
  };
}
