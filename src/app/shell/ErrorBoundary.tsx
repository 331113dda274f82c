/** Keeps a rendering bug in one view from blanking the whole app; shows what broke. */
import { Component, type ErrorInfo, type ReactNode } from 'react';

interface Props {
  children: ReactNode;
  /** Shown above the error; e.g. which view failed. */
  what: string;
  /** Called by the "Try again" button, e.g. to reopen a known-good env. */
  onRetry?: () => void;
}

export class ErrorBoundary extends Component<Props, { error: Error | null }> {
  override state = { error: null as Error | null };

  static getDerivedStateFromError(error: Error) {
    return { error };
  }

  override componentDidCatch(error: Error, info: ErrorInfo): void {
    console.warn(`${this.props.what} failed to render`, error, info.componentStack);
  }

  override render() {
    if (!this.state.error) return this.props.children;
    return (
      <div className="panel crash" role="alert">
        <h2>{this.props.what} hit a bug</h2>
        <pre className="crash-message">{this.state.error.message}</pre>
        <button
          type="button"
          className="btn"
          onClick={() => {
            this.props.onRetry?.();
            this.setState({ error: null });
          }}
        >
          Try again
        </button>
      </div>
    );
  }
}
