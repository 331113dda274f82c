/** Entry point: registers the envs, opens the view the URL names, and renders the app. */
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import '../core/envs/index.ts';
import { App } from './App.tsx';
import { startHashSync } from './state/hashSync.ts';
import { startLessonSync } from './lessons/sync.ts';
import './styles.css';

startHashSync();
startLessonSync();

const root = document.getElementById('root');
if (!root) throw new Error('index.html has no #root element');
createRoot(root).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
