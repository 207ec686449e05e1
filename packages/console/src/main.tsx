import { z } from '@cleveragents/contract';
import { createRoot } from 'react-dom/client';
import { App } from './app';
import './styles.css';

// The page's CSP allows no eval: the contract's schemas validate without compiling code.
z.config({ jitless: true });

const root = document.getElementById('root');
if (root) createRoot(root).render(<App />);
