import { createRoot } from 'react-dom/client';
import './styles.css';

const root = document.getElementById('root');
if (root) createRoot(root).render(<main>CleverAgents console</main>);
