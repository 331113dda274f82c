import { fmt } from '../ui/MetricChart.tsx';

/** An episode's advantage with its sign, green when the update made it more likely, red when less. */
export function SignedAdvantage({ value }: { value: number }) {
  return (
    <b className={value > 0 ? 'txt-good' : value < 0 ? 'txt-bad' : ''}>
      {value >= 0 ? '+' : ''}
      {fmt(value)}
    </b>
  );
}
