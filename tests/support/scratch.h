/* A scratch directory for tests that write files (agent files, recorded
 * sessions, tool configurations): one per test program, removed at the
 * end. Failures fail the test. */
#ifndef AW_TEST_SCRATCH_H
#define AW_TEST_SCRATCH_H

/* Make the directory ($TMPDIR or /tmp, named after tag); cmocka group
 * setup and teardown shapes. */
int aw_test_scratch_setup(void **state);
int aw_test_scratch_teardown(void **state);
/* The directory itself. */
const char *aw_test_scratch_dir(void);
/* NAME inside it (valid until the fourth call after this one). */
const char *aw_test_scratch_path(const char *name);
/* Write text to NAME inside it. */
void aw_test_scratch_write(const char *name, const char *text);

#endif
