"""Runs one Emu experiment in Mininet: the topology, the NF as every switch, the steps.

Started by `emu mininet` with /usr/bin/python3 (Debian's mininet package) and one argument,
the path of a JSON spec that `emu` wrote and checked (targets/mininet/src/lib.rs). Prints a
line per step and exits 0 when every step passed, 1 when one failed, 2 when the experiment
could not be set up.

Rules this file keeps, learnt the hard way on these machines:
- no Open vSwitch: controller=None and our own switch class, whose process is `emu run`;
- never Mininet's cleanup (`mn -c` kills processes by name machine-wide and deletes /tmp
  files): teardown is stopping the NF processes, then net.stop(), in a `finally`;
- hosts with IPv6 off and checksum offload off, or TCP/UDP checksums arrive wrong.
"""

import json
import os
import signal
import subprocess
import sys
import time

from mininet.log import setLogLevel
from mininet.net import Mininet
from mininet.node import Switch
from mininet.nodelib import LinuxBridge

# Set by main() from the spec before any EmuSwitch starts.
SPEC = {}
STOP_GRACE_S = 5
# Lines of an NF's output shown after teardown (a step's output shows its last 40).
FINAL_OUTPUT_LINES = 1000


def log(msg=''):
    print(msg, flush=True)


class EmuSwitch(Switch):
    """A switch whose datapath is `emu run NF --iface <its ports>`."""

    def __init__(self, name, **params):
        Switch.__init__(self, name, **params)
        self.proc = None
        self.log_path = os.path.join(SPEC['work_dir'], '%s.log' % name)

    def ports_in_order(self):
        return [i.name for i in self.intfList() if i.name != 'lo']

    def start(self, _controllers):
        ifaces = self.ports_in_order()
        for i in ifaces:
            # Keep the switch ports quiet: no IPv6 router solicitations or DAD from the host.
            subprocess.run(['sysctl', '-qw', 'net.ipv6.conf.%s.disable_ipv6=1' % i], check=False)
        cmd = [SPEC['emu'], 'run', SPEC['nf'], '--iface', ','.join(ifaces)]
        if SPEC.get('io'):
            cmd += ['--io', SPEC['io']]
        if SPEC.get('debug'):
            # The switch's debug channel: `emu dbg $WORK/<switch>.dbg` from a step.
            cmd += ['--debug-socket', os.path.join(SPEC['work_dir'], '%s.dbg' % self.name)]
        cmd += SPEC['nf_args']
        self.cmdline = ' '.join(cmd)
        out = open(self.log_path, 'w')
        self.proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        with open(os.path.join(SPEC['work_dir'], '%s.pid' % self.name), 'w') as f:
            f.write('%d\n' % self.proc.pid)
        deadline = time.time() + 10
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise SetupError('the NF process of %s exited at start (status %s):\n%s'
                                 % (self.name, self.proc.returncode, self.output()))
            if 'running on' in self.output():
                return
            time.sleep(0.05)
        raise SetupError('the NF process of %s did not start within 10 s:\n%s' % (self.name, self.output()))

    def output(self):
        try:
            with open(self.log_path) as f:
                return f.read()
        except OSError:
            return ''

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def stop_nf(self):
        """Stops the NF process (SIGTERM, then SIGKILL); returns its exit status."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(STOP_GRACE_S)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode

    def stop(self, deleteIntfs=True):
        self.stop_nf()
        Switch.stop(self, deleteIntfs)


class SetupError(Exception):
    pass


def configure_host(h):
    h.cmd('sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1 '
          'net.ipv6.conf.lo.disable_ipv6=1')
    for intf in h.intfList():
        h.cmd('ethtool -K %s tx off rx off sg off tso off gso off gro off >/dev/null 2>&1' % intf.name)


def check_names_free(topo):
    """Mininet puts switch ports in this namespace: refuse to clobber existing interfaces."""
    existing = set(os.listdir('/sys/class/net'))
    for link in topo['links']:
        for end in link:
            if end in topo['switches']:
                taken = [n for n in existing if n.startswith(end + '-eth')]
                if taken:
                    raise SetupError('interface %s already exists: is another experiment running? '
                                     'Stop it, or delete the interface with `ip link del %s`'
                                     % (taken[0], taken[0]))


def build(topo, switch_kind):
    switch_cls = LinuxBridge if switch_kind == 'bridge' else EmuSwitch
    net = Mininet(topo=None, controller=None, switch=switch_cls, build=False, autoSetMacs=True)
    for h in topo['hosts']:
        net.addHost(h['name'], ip=h['ip'])
    for s in topo['switches']:
        net.addSwitch(s)
    for a, b in topo['links']:
        net.addLink(a, b)
    return net


def kill_group(p):
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def substitute(cmd):
    return cmd.replace('$WORK', SPEC['work_dir']).replace('$EMU', SPEC['emu'])


def show(text, indent='      | ', limit=40):
    """Logs the last `limit` lines of `text`, saying how many earlier ones were left out."""
    lines = text.rstrip('\n').splitlines()
    if len(lines) > limit:
        log(indent + '(%d earlier lines not shown)' % (len(lines) - limit))
    for line in lines[-limit:]:
        log(indent + line)


def dead_switches(net):
    return [s for s in net.switches if isinstance(s, EmuSwitch) and not s.alive()]


def run_steps(net, steps):
    background = []
    failed = 0
    try:
        for n, step in enumerate(steps, 1):
            head = '[%d/%d]' % (n, len(steps))
            dead = dead_switches(net)
            if dead:
                return report_dead(dead, head)
            kind = step['kind']
            if kind == 'sleep':
                log('%s sleep %g' % (head, step['secs']))
                time.sleep(step['secs'])
                continue
            if kind == 'pingall':
                log('%s pingall' % head)
                loss = net.pingAll(timeout=step.get('timeout_s', 2))
                ok = loss == 0
                log('      %s: %s%% packet loss' % ('ok' if ok else 'FAILED', loss))
                failed += not ok
                continue
            host = net.get(step['host'])
            cmd = substitute(step['cmd'])
            if step.get('background'):
                p = host.popen(['bash', '-c', cmd], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                background.append(p)
                log('%s %s& %s  (started in the background)' % (head, step['host'], step['cmd']))
                continue
            t0 = time.time()
            p = host.popen(['bash', '-c', cmd], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            try:
                out, _ = p.communicate(timeout=step['timeout_s'])
                status = p.returncode
                timed_out = False
            except subprocess.TimeoutExpired:
                kill_group(p)
                out, _ = p.communicate()
                status, timed_out = None, True
            out = out.decode(errors='replace')
            dt = time.time() - t0
            if timed_out:
                ok, what = False, 'timed out after %g s' % step['timeout_s']
            elif step.get('expect_fail'):
                ok, what = status != 0, 'exit %s, failure expected' % status
            else:
                ok, what = status == 0, 'exit %s' % status
            log('%s %s: %s' % (head, step['host'], step['cmd']))
            show(out)
            log('      %s (%s, %.1f s)' % ('ok' if ok else 'FAILED', what, dt))
            failed += not ok
            dead = dead_switches(net)
            if dead:
                return report_dead(dead, head)
        return failed
    finally:
        for p in background:
            kill_group(p)
            p.wait()


def report_dead(dead, head):
    for s in dead:
        log('%s FAILED: the NF process of %s (%s) exited with status %s during the experiment; '
            'its last output:' % (head, s.name, s.cmdline, s.proc.returncode))
        show(s.output())
    return 1 + len(dead)


def main():
    global SPEC
    with open(sys.argv[1]) as f:
        SPEC = json.load(f)
    setLogLevel('warning')
    topo = SPEC['topology']
    net = None
    failed = 0
    try:
        check_names_free(topo)
        net = build(topo, SPEC.get('switch_kind', 'emu'))
        net.build()
        for h in net.hosts:
            configure_host(h)
        net.start()
        log('*** %s: %d hosts, %d switches (%s)' % (
            SPEC['nf'] if SPEC.get('switch_kind', 'emu') == 'emu' else 'linux bridge',
            len(net.hosts), len(net.switches), SPEC['topology_name']))
        if SPEC['mode'] == 'cli':
            from mininet.cli import CLI
            setLogLevel('output')  # the CLI prints what commands print at this level
            CLI(net)
            setLogLevel('warning')
        else:
            failed = run_steps(net, SPEC['steps'])
    except SetupError as e:
        log('error: %s' % e)
        return 2
    finally:
        if net is not None:
            # The NF processes first, so they never see their interfaces vanish mid-frame.
            statuses = {s.name: s.stop_nf() for s in net.switches if isinstance(s, EmuSwitch)}
            net.stop()
            for s in net.switches:
                if isinstance(s, EmuSwitch):
                    # Whole, up to a bound: an NF's summary at exit (a flow table, a histogram)
                    # is what a test or a user reads the run by.
                    log('*** %s: NF stopped (status %s); counters:' % (s.name, statuses[s.name]))
                    show(s.output(), indent='      ', limit=FINAL_OUTPUT_LINES)
    if failed:
        log('experiment FAILED: %d step(s) failed' % failed)
        return 1
    log('experiment passed')
    return 0


if __name__ == '__main__':
    sys.exit(main())
