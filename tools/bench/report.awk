# report.awk - `make bench`: turn the guest runs' results.txt files into docs/benchmarks.md
# (markdown on stdout) and the plot's data (file given as -v plotdata=FILE).
#
# Usage: awk -f report.awk -v plotdata=FILE series=6.1 DIR/6.1/results.txt series=6.12 ...
# Input lines: "result impl=I kernel=K size=S path=P [queue_lock=Q load=L] metric=M value=V",
# "meta KEY=VALUE...", "error LABEL ...". Missing figures print as an em dash; "n/a" stays.

function num(v) { return v != "" && v != "n/a" && v != "-" }
function get(s, impl, size, path, ctx, metric,    v) {	# numbers as numbers
	v = val[s SUBSEP impl SUBSEP size SUBSEP path SUBSEP ctx SUBSEP metric]
	return num(v) ? v + 0 : v
}
function ms(v) {	# microseconds -> "12.3" ms
	if (!num(v)) return v == "" ? "—" : v
	if (v >= 100000) return sprintf("%.0f", v / 1000)
	if (v >= 10000) return sprintf("%.1f", v / 1000)
	return sprintf("%.2f", v / 1000)
}
function us(v) { return num(v) ? sprintf("%.0f", v) : (v == "" ? "—" : v) }
function fps(v) {
	if (!num(v)) return v == "" ? "—" : v
	return v >= 100 ? sprintf("%.0f", v) : sprintf("%.1f", v)
}
function torn_cell(s, impl, size, path,    t, c) {	# "3 of 412"
	t = get(s, impl, size, path, "", "torn_frames")
	c = get(s, impl, size, path, "", "torn_checked")
	return (t == "" && c == "") ? "—" : us(t) " of " us(c)
}
function ratio(a, b) { return (num(a) && num(b) && b > 0) ? sprintf("%.2f×", a / b) : "—" }
function verdict(ok, known) {
	if (!known) return "—"
	tally_known++
	if (ok) { tally_met++; return "met" }
	return "**missed**"
}

BEGIN { nser = 0 }
FNR == 1 { if (!(series in seen)) { seen[series] = 1; ser[++nser] = series } }
/^result / {
	delete f
	for (i = 2; i <= NF; i++) {
		p = index($i, "=")
		if (p) f[substr($i, 1, p - 1)] = substr($i, p + 1)
	}
	ctx = ("queue_lock" in f) ? f["queue_lock"] "/" f["load"] : (("consumers" in f) ? "c" f["consumers"] : "")
	val[series SUBSEP f["impl"] SUBSEP f["size"] SUBSEP f["path"] SUBSEP ctx SUBSEP f["metric"]] = f["value"]
	if (f["impl"] == "idle") { meta[series, "idle_cpu_us_per_s"] = f["value"]; next }
	if (!((series, f["size"]) in hasSize) && ctx == "") {
		hasSize[series, f["size"]] = 1
		sizes[series] = sizes[series] (sizes[series] == "" ? "" : " ") f["size"]
	}
	next
}
/^meta / {
	for (i = 2; i <= NF; i++) {
		p = index($i, "=")
		if (p) meta[series, substr($i, 1, p - 1)] = substr($i, p + 1)
	}
	next
}
/^error / { errs[series] = errs[series] "\n- `" substr($0, 7) "`"; next }

END {
	for (k = 1; k <= nser; k++) {
		s = ser[k]
		kver = meta[s, "kernel"]
		peer = meta[s, "peer"]
		tally_met = tally_known = 0
		printf "## Linux %s (`%s`)\n\n", s, kver
		printf "Measured %s in one guest run (%s vCPUs, %s, TCG); guest time %s s, whole run " \
			"with boot %s s. ", meta[s, "date"], meta[s, "cpus"], meta[s, "cpu_model"],
			meta[s, "guest_seconds"], meta[s, "host_seconds"]
		if (peer != "") {
			printf "Peer: v4l2loopback %s from Debian's `v4l2loopback-source`, built for this kernel", peer
			if (meta[s, "peer_compat"] != "") {
				c = meta[s, "peer_compat"]; gsub(/_/, " ", c)
				printf " (%s)", c
			}
			printf ".\n\n"
		} else {
			c = meta[s, "peer_failed"]; gsub(/_/, " ", c)
			printf "**Peer not available on this kernel**%s; viacam's figures stand alone.\n\n",
				c != "" ? ": `" c "`" : ""
		}
		if (errs[s] != "")
			printf "Runs that failed (their figures are missing):%s\n\n", errs[s]

		if (num(meta[s, "idle_cpu_us_per_s"]))
			printf "The idle guest used %.0f µs of CPU per second, i.e. %.0f µs per frame at 30 fps " \
				"and %.0f at 60 fps are background, not the bridges.\n\n",
				meta[s, "idle_cpu_us_per_s"], meta[s, "idle_cpu_us_per_s"] / 30,
				meta[s, "idle_cpu_us_per_s"] / 60
		n = split(sizes[s], sz, " ")
		# Table 1: throughput, CPU, copies.
		printf "**Throughput, CPU and copies** (YUYV; frames/s at the consumer with an unpaced producer; " \
			"CPU = busy time of all CPUs per frame at 30 fps; copies = kernel frame copies per " \
			"delivered frame)\n\n"
		printf "| size | producer | fps viacam | fps v4l2loopback | ratio | ≥ 1.0× | CPU µs/frame viacam | v4l2loopback | ratio | ≤ 1.0× | copies viacam | copies v4l2loopback | write() ≤ 1 |\n"
		printf "|---|---|--:|--:|--:|---|--:|--:|--:|---|--:|--:|---|\n"
		for (i = 1; i <= n; i++) for (pi = 1; pi <= 3; pi++) {
			size = sz[i]; path = pi == 1 ? "write" : (pi == 2 ? "mmap" : "lend")
			# viacam's zero-copy path is measured against v4l2loopback's mmap path
			ppath = path == "lend" ? "mmap" : path
			if (path == "lend" && get(s, "viacam", size, path, "", "fps") == "") continue
			fv = get(s, "viacam", size, path, "", "fps")
			fl = get(s, "v4l2loopback", size, ppath, "", "fps")
			cv = get(s, "viacam", size, path, "", "cpu_us_per_frame_30")
			cl = get(s, "v4l2loopback", size, ppath, "", "cpu_us_per_frame_30")
			kv = get(s, "viacam", size, path, "", "copies_per_frame_30")
			kl = peer == "" ? "—" : (path == "write" ? "1 (source)" : "0 (source)")
			cverd = path == "write" ? verdict(num(kv) && kv <= 1.001, num(kv)) : ""
			if (path == "write" && !num(kv)) cverd = "n/a"
			printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
				size, path == "lend" ? "lend (vs mmap)" : path, fps(fv), fps(fl), ratio(fv, fl),
				verdict(num(fv) && num(fl) && fv >= fl, num(fv) && num(fl)),
				us(cv), us(cl), ratio(cv, cl),
				verdict(num(cv) && num(cl) && cv <= cl, num(cv) && num(cl)),
				num(kv) ? sprintf("%.2f", kv) : (kv == "" ? "—" : kv), kl, cverd
			if (plotdata != "" && path != "lend")
				printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", s, size " " path,
					(num(fv) && num(fl) && fl > 0) ? fv / fl : "NaN",
					num(get(s, "viacam", size, path, "", "lat30_p99_us")) ? get(s, "viacam", size, path, "", "lat30_p99_us") / 1000 : "NaN",
					num(get(s, "v4l2loopback", size, path, "", "lat30_p99_us")) ? get(s, "v4l2loopback", size, path, "", "lat30_p99_us") / 1000 : "NaN",
					num(get(s, "viacam", size, path, "", "lat60_p99_us")) ? get(s, "viacam", size, path, "", "lat60_p99_us") / 1000 : "NaN",
					num(get(s, "v4l2loopback", size, path, "", "lat60_p99_us")) ? get(s, "v4l2loopback", size, path, "", "lat60_p99_us") / 1000 : "NaN" >> plotdata
		}
		printf "\n"

		# Table 1b: torn frames.
		printf "**Torn frames** (an unpaced producer writes the frame counter at the top and the " \
			"bottom of each frame; the consumer copies each frame out of its buffer, as an encoder " \
			"or a display reads it, and counts the copies whose two counters differ; %s s per run)\n\n",
			meta[s, "fps_seconds"]
		printf "| size | producer | torn viacam | torn v4l2loopback | 0 torn |\n"
		printf "|---|---|--:|--:|---|\n"
		for (ti = 1; ti <= 3 * n; ti++) {	# not k: the loop over the series
			size = sz[int((ti + 2) / 3)]; path = ti % 3 == 1 ? "write" : (ti % 3 == 2 ? "mmap" : "lend")
			tv = get(s, "viacam", size, path, "", "torn_frames")
			nv = get(s, "viacam", size, path, "", "torn_checked")
			if (path == "lend" && tv == "") continue
			printf "| %s | %s | %s | %s | %s |\n", size, path == "lend" ? "lend (vs mmap)" : path,
				torn_cell(s, "viacam", size, path),
				torn_cell(s, "v4l2loopback", size, path == "lend" ? "mmap" : path),
				verdict(num(tv) && tv == 0, num(tv) && num(nv) && nv > 0)
		}
		printf "\n"

		# Table 1c: several consumers of one stream.
		csz = meta[s, "consumers_size"]
		if (csz != "") {
			printf "**Several consumers of one stream** (%s YUYV, unpaced producer, %s s per run; " \
				"viacam: that many capture nodes of one camera; v4l2loopback: its one node opened " \
				"by each consumer, which share its buffers; fps = the first consumer's frames/s, " \
				"slowest = the slowest consumer's; CPU = busy time of all CPUs per frame of the " \
				"first consumer, so the cost of the extra consumers is in it; copies = viacam's " \
				"kernel copies per frame the first consumer got, all consumers' copies counted)\n\n", csz, meta[s, "fps_seconds"]
			printf "| producer | consumers | fps viacam | slowest | v4l2loopback | slowest | CPU µs/frame viacam | v4l2loopback | copies viacam |\n"
			printf "|---|--:|--:|--:|--:|--:|--:|--:|--:|\n"
			for (pi = 1; pi <= 3; pi++) for (ci = 1; ci <= 3; ci++) {
				path = pi == 1 ? "write" : (pi == 2 ? "mmap" : "lend"); nc = ci == 1 ? 1 : (ci == 2 ? 2 : 4)
				if (path == "lend" && get(s, "viacam", csz, path, nc == 1 ? "" : "c" nc, "fps") == "") continue
				cx = nc == 1 ? "" : "c" nc
				fv = get(s, "viacam", csz, path, cx, "fps")
				ppath = path == "lend" ? "mmap" : path
				fl = get(s, "v4l2loopback", csz, ppath, cx, "fps")
				mv = nc == 1 ? fv : get(s, "viacam", csz, path, cx, "fps_min")
				ml = nc == 1 ? fl : get(s, "v4l2loopback", csz, ppath, cx, "fps_min")
				kv = get(s, "viacam", csz, path, cx, nc == 1 ? "copies_per_frame_unpaced" : "copies_per_first_frame")
				printf "| %s | %d | %s | %s | %s | %s | %s | %s | %s |\n", path == "lend" ? "lend (vs mmap)" : path, nc, fps(fv), fps(mv),
					fps(fl), fps(ml), us(get(s, "viacam", csz, path, cx, "cpu_us_per_frame_unpaced")),
					us(get(s, "v4l2loopback", csz, ppath, cx, "cpu_us_per_frame_unpaced")),
					num(kv) ? sprintf("%.2f", kv) : (kv == "" ? "—" : kv)
			}
			printf "\n"
			if (meta[s, "peer_multi_consumers"] == "refused")
				printf "v4l2loopback %s refuses a second consumer's streaming I/O on its node (REQBUFS: " \
					"EBUSY), so it has no figures for several consumers here.\n\n", meta[s, "peer"]
		}

		# Table 2: latency.
		printf "**Latency** from the producer's QBUF/write() to the consumer's DQBUF, ms " \
			"(paced producer; %s frames at 30 fps, %s at 60 fps)\n\n",
			meta[s, "lat30_frames"], meta[s, "lat60_frames"]
		printf "| size | producer | 30 fps p50 viacam | v4l2loopback | p99 viacam | v4l2loopback | p99 ≤ peer | 60 fps p50 viacam | v4l2loopback | p99 viacam | v4l2loopback | p99 ≤ peer |\n"
		printf "|---|---|--:|--:|--:|--:|---|--:|--:|--:|--:|---|\n"
		for (i = 1; i <= n; i++) for (pi = 1; pi <= 3; pi++) {
			size = sz[i]; path = pi == 1 ? "write" : (pi == 2 ? "mmap" : "lend")
			ppath = path == "lend" ? "mmap" : path
			if (path == "lend" && get(s, "viacam", size, path, "", "lat30_p50_us") == "") continue
			line = "| " size " | " (path == "lend" ? "lend (vs mmap)" : path)
			for (r = 30; r <= 60; r += 30) {
				a = get(s, "viacam", size, path, "", "lat" r "_p50_us")
				b = get(s, "v4l2loopback", size, ppath, "", "lat" r "_p50_us")
				c = get(s, "viacam", size, path, "", "lat" r "_p99_us")
				d = get(s, "v4l2loopback", size, ppath, "", "lat" r "_p99_us")
				line = line " | " ms(a) " | " ms(b) " | " ms(c) " | " ms(d) " | " \
					verdict(num(c) && num(d) && c <= d, num(c) && num(d))
			}
			print line " |"
		}
		printf "\nTargets met on this kernel: %d of %d judged.\n\n", tally_met, tally_known

		# Table 3: locking.
		printf "**Control ioctls on the capture node** (a third file handle; µs p50 / p99 / max; " \
			"one round of QUERYCAP, G_CTRL, S_CTRL per ms for %s s). Loads: a 1920×1080 stream " \
			"paced at 30 fps with a write(), an mmap or (viacam) a lend producer, and with an mmap producer and a consumer that read()s; a consumer blocked in DQBUF " \
			"(640×480) after the producer's only frame. Controls: viacam a declared Brightness, " \
			"v4l2loopback its own `keep_format`.\n\n", meta[s, "ctrl_seconds"]
		if (meta[s, "queue_lock_param"] != "yes")
			printf "queue_lock parameter not available in this build of viacam: only the default " \
				"(shared lock) was measured.\n\n"
		printf "| bridge | setting | load | QUERYCAP | G_CTRL | S_CTRL | rounds | stream fps |\n"
		printf "|---|---|---|--:|--:|--:|--:|--:|\n"
		split("viacam/0 viacam/1 v4l2loopback/na", rows, " ")
		for (ri = 1; ri <= 3; ri++) {
			split(rows[ri], rr, "/")
			impl = rr[1]; ql = rr[2]
			for (li = 1; li <= 5; li++) {
				load = li == 5 ? "blocked" : (li == 4 ? "read" : "stream")
				size = li == 5 ? "640x480" : "1920x1080"
				path = (li == 2 || li == 4) ? "mmap" : (li == 3 ? "lend" : "write")
				ctx = ql "/" load
				if (get(s, impl, size, path, ctx, "ctrl_rounds") == "") continue
				cell = ""
				split("querycap g_ctrl s_ctrl", ops, " ")
				for (oi = 1; oi <= 3; oi++)
					cell = cell " | " us(get(s, impl, size, path, ctx, ops[oi] "_p50_us")) " / " \
						us(get(s, impl, size, path, ctx, ops[oi] "_p99_us")) " / " \
						us(get(s, impl, size, path, ctx, ops[oi] "_max_us"))
				lf = get(s, impl, size, path, ctx, "load_fps")
				printf "| %s | %s | %s%s | %s | %s |\n", impl,
					ql == "na" ? "(own locking)" : (ql == 0 ? "queue_lock=0 (shared)" : "queue_lock=1 (per queue)"),
					load == "blocked" ? "consumer blocked in DQBUF" : (load == "read" ? "1080p30, mmap producer, read() consumer" : (path == "write" ? "1080p30, write() producer" : (path == "lend" ? "1080p30, lend producer (0 copies)" : "1080p30, mmap producer"))),
					cell, get(s, impl, size, path, ctx, "ctrl_rounds"),
					load == "blocked" ? "— (" fps(lf) " DQBUF returns/s)" : fps(lf)
			}
		}
		printf "\n"

		# What this kernel's figures say, in numbers.
		printf "In short (Linux %s):\n\n", s
		for (pi = 1; pi <= 3; pi++) {
			path = pi == 1 ? "write" : (pi == 2 ? "mmap" : "lend"); lo = hi = ""
			for (i = 1; i <= n; i++) {
				fv = get(s, "viacam", sz[i], path, "", "fps")
				fl = get(s, "v4l2loopback", sz[i], path == "lend" ? "mmap" : path, "", "fps")
				if (!num(fv) || !num(fl) || fl <= 0) continue
				r = fv / fl
				if (lo == "" || r < lo) lo = r
				if (hi == "" || r > hi) hi = r
			}
			if (lo != "" && path == "lend")
				printf "- Unpaced throughput of viacam's zero-copy path (frames written into lent " \
					"capture buffers): %.2f× to %.2f× of v4l2loopback's mmap path.\n", lo, hi
			else if (lo != "")
				printf "- Unpaced throughput with %s producer: viacam reaches %.2f× to %.2f× of " \
					"v4l2loopback's frames/s.\n", (path == "write" ? "a write()" : "an mmap"), lo, hi
		}
		for (ri = 1; ri <= 3; ri++) {
			split(rows[ri], rr, "/")
			impl = rr[1]; ql = rr[2]
			a = get(s, impl, "1920x1080", "write", ql "/stream", "querycap_p99_us")
			b = get(s, impl, "1920x1080", "mmap", ql "/stream", "querycap_p99_us")
			d = get(s, impl, "1920x1080", "lend", ql "/stream", "querycap_p99_us")
			e = get(s, impl, "1920x1080", "mmap", ql "/read", "querycap_p99_us")
			c = get(s, impl, "640x480", "write", ql "/blocked", "querycap_p99_us")
			if (!num(a) && !num(b) && !num(c)) continue
			printf "- QUERYCAP p99 on the capture node, %s: %s µs during the 1080p write() " \
				"stream, %s µs during the mmap stream,%s %s µs with a consumer blocked in DQBUF.\n",
				(impl == "v4l2loopback" ? "v4l2loopback (no lock around its ioctls)" : "viacam queue_lock=" ql),
				us(a), us(b), (num(d) ? " " us(d) " µs during the zero-copy (lend) stream," : "") \
				(num(e) ? " " us(e) " µs with a read() consumer of the mmap stream," : ""), us(c)
		}
		printf "\n"
	}
}
