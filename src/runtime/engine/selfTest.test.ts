import { describe, expect, it } from 'vitest';
import { parsePlacement } from './selfTest.ts';

describe('parsePlacement', () => {
  it('reads ORT verbose placement lines (format captured from onnxruntime-web 1.30 in Chromium)', () => {
    const lines = [
      '2026-11-22 06:06:10.133613 [V:onnxruntime:, session_state.cc:1377 VerifyEachNodeIsAssignedToAnEp] Node placements',
      '2026-11-22 06:06:10.133858 [V:onnxruntime:, session_state.cc:1383 VerifyEachNodeIsAssignedToAnEp]  Node(s) placed on [CPUExecutionProvider]. Number of nodes: 1',
      '2026-11-22 06:06:10.134073 [V:onnxruntime:, session_state.cc:1385 VerifyEachNodeIsAssignedToAnEp]   LogSoftmax (ls)',
      '2026-11-22 06:06:10.134288 [V:onnxruntime:, session_state.cc:1383 VerifyEachNodeIsAssignedToAnEp]  Node(s) placed on [WebGpuExecutionProvider]. Number of nodes: 3',
      '2026-11-22 06:06:10.134503 [V:onnxruntime:, session_state.cc:1385 VerifyEachNodeIsAssignedToAnEp]   MatMul (mm)',
      '2026-11-22 06:06:10.134688 [V:onnxruntime:, session_state.cc:1385 VerifyEachNodeIsAssignedToAnEp]   Softmax (sm)',
    ];
    const p = parsePlacement('probe', lines);
    expect(p.counts).toEqual({ CPUExecutionProvider: 1, WebGpuExecutionProvider: 3 });
    expect(p.cpuNodes).toEqual(['LogSoftmax (ls)']);
  });

  it('reads the one-line form ORT prints when a single EP takes every node', () => {
    const p = parsePlacement('all', [
      '2026-11-22 06:47:17.495279 [V:onnxruntime:, session_state.cc:1380 VerifyEachNodeIsAssignedToAnEp]  All nodes placed on [WebGpuExecutionProvider]. Number of nodes: 17',
    ]);
    expect(p.counts).toEqual({ WebGpuExecutionProvider: 17 });
    expect(p.cpuNodes).toEqual([]);
  });
});
