/**
 * The engine check's self-test report: where each graph's nodes run on WebGPU, whether WebGPU and
 * WASM agree on one train step and on the session layer, and the median train step time.
 */
import type { SelfTestReport } from '../../runtime/engine/selfTest.ts';

/** The largest |Δ| between WebGPU and WASM still counted as agreeing. */
const AGREEMENT_TOLERANCE = 1e-4;

export type Status = 'idle' | 'running' | 'done' | 'failed';

function PlacementTable({ report }: { report: SelfTestReport }) {
  return (
    <table className="check-table">
      <thead>
        <tr>
          <th>graph</th>
          <th>nodes on WebGPU</th>
          <th>nodes on CPU</th>
        </tr>
      </thead>
      <tbody>
        {report.placements.map((p) => (
          <tr key={p.graph} className={p.cpuNodes.length ? 'bad' : 'good'}>
            <td>{p.graph}</td>
            <td>{p.counts.WebGpuExecutionProvider ?? 0}</td>
            <td>{p.cpuNodes.length ? p.cpuNodes.join(', ') : 'none'}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function AgreementTable({ report }: { report: SelfTestReport }) {
  return (
    <table className="check-table">
      <thead>
        <tr>
          <th>model</th>
          <th>max |Δ|</th>
          <th>where</th>
        </tr>
      </thead>
      <tbody>
        {report.agreements.map((a) => (
          <tr key={a.model} className={a.maxAbsDiff <= AGREEMENT_TOLERANCE ? 'good' : 'bad'}>
            <td>{a.model}</td>
            <td>{a.maxAbsDiff.toExponential(2)}</td>
            <td>{a.worst}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function SessionTable({ session }: { session: NonNullable<SelfTestReport['session']> }) {
  const nanSafe = !session.nanApplied && !session.nanWeightsChanged;
  return (
    <>
      <h2>Session layer, state kept on the GPU</h2>
      <table className="check-table">
        <tbody>
          <tr className={Number(session.metricMaxDiff) <= AGREEMENT_TOLERANCE ? 'good' : 'bad'}>
            <td>3 chained steps vs WASM, metrics max |Δ|</td>
            <td>{Number(session.metricMaxDiff).toExponential(2)}</td>
          </tr>
          <tr className={Number(session.weightMaxDiff) <= AGREEMENT_TOLERANCE ? 'good' : 'bad'}>
            <td>weights after those steps, max |Δ|</td>
            <td>{Number(session.weightMaxDiff).toExponential(2)}</td>
          </tr>
          <tr className={nanSafe ? 'good' : 'bad'}>
            <td>NaN in the batch: update skipped, weights untouched</td>
            <td>{nanSafe ? 'yes' : 'NO'}</td>
          </tr>
          <tr className={Number(session.decodeMaxDiff) <= AGREEMENT_TOLERANCE ? 'good' : 'bad'}>
            <td>KV-cache decoding vs WASM, log-probs max |Δ|</td>
            <td>{Number(session.decodeMaxDiff).toExponential(2)}</td>
          </tr>
        </tbody>
      </table>
    </>
  );
}

function TimingTable({ report }: { report: SelfTestReport }) {
  return (
    <table className="check-table">
      <thead>
        <tr>
          <th>model</th>
          <th>backend</th>
          <th>ms</th>
        </tr>
      </thead>
      <tbody>
        {report.timings.map((t) => (
          <tr key={t.model + t.backend}>
            <td>{t.model}</td>
            <td>{t.backend}</td>
            <td>{t.ms.toFixed(1)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function SelfTestSection({ status, report }: { status: Status; report: SelfTestReport | null }) {
  const cpuTotal = report?.placements.reduce((s, p) => s + p.cpuNodes.length, 0) ?? 0;
  return (
    <section className="check-card" data-testid="selftest" data-status={status}>
      <h2>Placement on WebGPU</h2>
      {!report ? <p className="muted">Not run yet.</p> : !report.webgpu ? <p>No WebGPU adapter here: everything runs on WASM.</p> : <PlacementTable report={report} />}
      {report?.webgpu && <p className={cpuTotal ? 'check-warn' : 'check-ok'}>{cpuTotal ? `${cpuTotal} node(s) fall back to the CPU.` : 'Every node runs on WebGPU.'}</p>}
      <h2>WebGPU vs WASM, one train step</h2>
      {report && report.agreements.length === 0 && <p className="muted">Needs both backends.</p>}
      {report && report.agreements.length > 0 && <AgreementTable report={report} />}
      {report?.session && <SessionTable session={report.session} />}
      <h2>Train step time (median)</h2>
      {report && <TimingTable report={report} />}
      {report && report.errors.length > 0 && (
        <ul className="check-error">
          {report.errors.map((e) => (
            <li key={e}>{e}</li>
          ))}
        </ul>
      )}
      {report && (
        <pre hidden data-testid="selftest-json">
          {JSON.stringify(report)}
        </pre>
      )}
    </section>
  );
}
