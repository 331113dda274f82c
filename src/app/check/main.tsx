import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { DeviceCheck } from './DeviceCheck.tsx';
import '../styles.css';
import './check.css';

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <DeviceCheck />
  </StrictMode>,
);
