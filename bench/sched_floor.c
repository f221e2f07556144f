// SPDX-License-Identifier: MIT
/*
 * sched_floor OBJECT: loads and attaches every program of the BPF object file
 * OBJECT (bench/sched_floor.bpf.c: empty programs on sched_switch and
 * sched_wakeup), prints "ready" once they are attached, keeps them until its
 * stdin reaches end of file, then detaches them and exits. Row 11's floor.
 */
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct bpf_object *obj;
	struct bpf_program *prog;
	char buf[256];
	ssize_t r;

	if (argc != 2) {
		fprintf(stderr, "usage: sched_floor OBJECT\n");
		return 2;
	}
	obj = bpf_object__open_file(argv[1], NULL);
	if (!obj || bpf_object__load(obj)) {
		fprintf(stderr, "sched_floor: cannot load %s\n", argv[1]);
		return 1;
	}
	bpf_object__for_each_program(prog, obj)
		if (!bpf_program__attach(prog)) {
			fprintf(stderr, "sched_floor: cannot attach %s\n", bpf_program__name(prog));
			return 1;
		}
	printf("ready\n");
	fflush(stdout);
	while ((r = read(0, buf, sizeof(buf))) > 0 || (r < 0 && errno == EINTR))
		;
	bpf_object__close(obj);
	return 0;
}
