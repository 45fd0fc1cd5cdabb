import 'uplot/dist/uPlot.min.css';
import './style.css';

const app = document.getElementById('app');
if (app !== null) app.textContent = 'Horae';
