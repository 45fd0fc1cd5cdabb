/**
 * The dashboard page, served at `/`: all logic lives in ui/src/lib (dashboard.ts wires it).
 * `window.horae` exposes the controller for devtools and the browser tests.
 */
import 'uplot/dist/uPlot.min.css';
import './style.css';
import { Dashboard } from '../../lib/dashboard.js';

const dashboard = new Dashboard();
document.getElementById('app')?.replaceChildren(dashboard.el);
(window as unknown as { horae: Dashboard }).horae = dashboard;
void dashboard.start();
