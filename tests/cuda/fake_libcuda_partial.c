/* A "driver" that exports only cuInit and cuDriverGetVersion: the CUDA device must name every
   missing required symbol. */
int cuInit(unsigned flags) {
  return (int)flags * 0;
}
int cuDriverGetVersion(int *version) {
  *version = 11000;
  return 0;
}
