// server-everything listens on every interface (app.listen(PORT)); this hook,
// loaded with node --import, makes a listen on a bare port listen on
// 127.0.0.1 only, so that the harness never serves the network.
import net from 'node:net';
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const port = args[0];
  if (typeof port === 'number' || (typeof port === 'string' && /^\d+$/.test(port))) {
    const rest = args.slice(1).filter((a) => typeof a === 'function');
    return listen.call(this, Number(port), '127.0.0.1', ...rest);
  }
  return listen.apply(this, args);
};
