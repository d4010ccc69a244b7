-- SPDX-License-Identifier: BSD-3-Clause
--
-- Wireshark / tshark dissector for the turbolb RPC header, version 1
-- (docs/protocol.md). Registered on UDP port 9000; the port is a
-- preference (Edit > Preferences > Protocols > TURBOLB, or
-- `-o turbolb.udp_port:N` on the command line).
--
--   wireshark -X lua_script:scripts/turbolb.lua capture.pcap
--   tshark -X lua_script:scripts/turbolb.lua -r capture.pcap -Y turbolb
--
-- or copy it into ~/.local/lib/wireshark/plugins/ to have it always.
--
-- The parser in src/lib/proto.c drops what this dissector flags; the
-- expert items carry the same drop-reason names (bad_magic, bad_version,
-- ...), so a capture can be matched against the daemon's counters.
--
-- It also decodes memcached's 8-byte UDP frame header (request id,
-- sequence number, total datagrams, reserved; docs/protocol.md,
-- "Protocols") on UDP port 11211 (preference mcudp.udp_port), which
-- Wireshark's own memcache dissector does not skip, and hands the text
-- after it to that dissector.

local HDR_LEN = 48
local MAGIC = 0x5442
local VERSION = 1
local MAX_PKTS = 64
local DEFAULT_PORT = 9000

local turbolb = Proto("turbolb", "turbolb RPC")

local msg_types = {
	[1] = "Request",
	[2] = "Response",
	[3] = "Error",
}

local statuses = {
	[0] = "OK",
	[1] = "Not found",
	[2] = "Bad request",
	[3] = "Overload",
}

local f = turbolb.fields
f.magic = ProtoField.uint16("turbolb.magic", "Magic", base.HEX)
f.version = ProtoField.uint8("turbolb.version", "Version", base.DEC)
f.type = ProtoField.uint8("turbolb.type", "Message type", base.DEC,
	msg_types)
f.flags = ProtoField.uint16("turbolb.flags", "Flags", base.HEX)
f.flag_hint = ProtoField.bool("turbolb.flags.hint", "Service-time hint",
	16, { "Set: svc_hint_ns is valid", "Not set" }, 0x0001)
f.flag_reserved = ProtoField.uint16("turbolb.flags.reserved",
	"Reserved flags", base.HEX, nil, 0xfffe)
f.svc_class = ProtoField.uint16("turbolb.svc_class", "Service class",
	base.DEC)
f.req_id = ProtoField.uint64("turbolb.req_id", "Request id", base.HEX)
f.pkt_idx = ProtoField.uint16("turbolb.pkt_idx", "Packet index", base.DEC)
f.pkt_cnt = ProtoField.uint16("turbolb.pkt_cnt", "Packet count", base.DEC)
f.payload_len = ProtoField.uint16("turbolb.payload_len", "Payload length",
	base.DEC)
f.status = ProtoField.uint16("turbolb.status", "Status", base.DEC,
	statuses)
f.svc_hint_ns = ProtoField.uint32("turbolb.svc_hint_ns",
	"Service-time hint (ns)", base.DEC)
f.work_ns = ProtoField.uint32("turbolb.work_ns", "Work charged (ns)",
	base.DEC)
f.client_ts = ProtoField.uint64("turbolb.client_ts", "Client timestamp",
	base.DEC)
f.server_core = ProtoField.uint16("turbolb.server_core", "Server core",
	base.DEC)
f.reserved = ProtoField.uint16("turbolb.reserved", "Reserved", base.HEX)
f.service_ns = ProtoField.uint32("turbolb.service_ns", "Service time (ns)",
	base.DEC)
f.payload = ProtoField.bytes("turbolb.payload", "Payload")
f.trailer = ProtoField.bytes("turbolb.trailer",
	"Bytes after the payload")

-- One expert item per parser drop reason above the UDP layer.
local e = {
	trunc_rpc = ProtoExpert.new("turbolb.trunc_rpc", "Truncated RPC header",
		expert.group.MALFORMED, expert.severity.ERROR),
	bad_magic = ProtoExpert.new("turbolb.bad_magic", "Bad magic",
		expert.group.MALFORMED, expert.severity.ERROR),
	bad_version = ProtoExpert.new("turbolb.bad_version",
		"Unsupported version", expert.group.MALFORMED,
		expert.severity.ERROR),
	bad_type = ProtoExpert.new("turbolb.bad_type", "Unknown message type",
		expert.group.MALFORMED, expert.severity.ERROR),
	bad_pkt_count = ProtoExpert.new("turbolb.bad_pkt_count",
		"Packet count out of range", expert.group.MALFORMED,
		expert.severity.ERROR),
	bad_pkt_index = ProtoExpert.new("turbolb.bad_pkt_index",
		"Packet index not below the packet count",
		expert.group.MALFORMED, expert.severity.ERROR),
	bad_payload_len = ProtoExpert.new("turbolb.bad_payload_len",
		"Payload length beyond the datagram", expert.group.MALFORMED,
		expert.severity.ERROR),
	reserved_flags = ProtoExpert.new("turbolb.reserved_flags",
		"Reserved flag bits set", expert.group.PROTOCOL,
		expert.severity.NOTE),
}
turbolb.experts = {
	e.trunc_rpc, e.bad_magic, e.bad_version, e.bad_type, e.bad_pkt_count,
	e.bad_pkt_index, e.bad_payload_len, e.reserved_flags,
}

turbolb.prefs.udp_port = Pref.uint("UDP port", DEFAULT_PORT,
	"UDP port of the turbolb RPC service (requests go to it, " ..
	"responses come from it)")

local function info_text(mtype, req_id, pkt_idx, pkt_cnt, status)
	local s = string.format("%s req_id=0x%s", msg_types[mtype] or
		string.format("Type %u", mtype), req_id:tohex())
	if pkt_cnt ~= 1 then
		s = s .. string.format(" pkt %u/%u", pkt_idx + 1, pkt_cnt)
	end
	if mtype ~= 1 then
		s = s .. " status=" .. (statuses[status] or tostring(status))
	end
	return s
end

function turbolb.dissector(tvb, pinfo, tree)
	local len = tvb:len()

	pinfo.cols.protocol = "TURBOLB"
	local t = tree:add(turbolb, tvb())
	if len < HDR_LEN then
		t:add_proto_expert_info(e.trunc_rpc, string.format(
			"Only %u bytes, the RPC header has %u", len, HDR_LEN))
		pinfo.cols.info = "Truncated RPC header"
		return len
	end

	local magic = tvb(0, 2):uint()
	local item = t:add(f.magic, tvb(0, 2))
	if magic ~= MAGIC then
		item:add_proto_expert_info(e.bad_magic, string.format(
			"Bad magic 0x%04x (expected 0x%04x)", magic, MAGIC))
	end

	local version = tvb(2, 1):uint()
	item = t:add(f.version, tvb(2, 1))
	if version ~= VERSION then
		item:add_proto_expert_info(e.bad_version, string.format(
			"Version %u (this dissector knows %u)", version,
			VERSION))
	end

	local mtype = tvb(3, 1):uint()
	item = t:add(f.type, tvb(3, 1))
	if msg_types[mtype] == nil then
		item:add_proto_expert_info(e.bad_type)
	end

	local flags = tvb(4, 2):uint()
	local ft = t:add(f.flags, tvb(4, 2))
	ft:add(f.flag_hint, tvb(4, 2))
	ft:add(f.flag_reserved, tvb(4, 2))
	-- Only bit 0 is defined; arithmetic keeps this free of the bit
	-- library, which differs across Wireshark's Lua versions.
	if flags >= 2 then
		ft:add_proto_expert_info(e.reserved_flags)
	end

	t:add(f.svc_class, tvb(6, 2))
	local req_id = tvb(8, 8):uint64()
	t:add(f.req_id, tvb(8, 8))

	local pkt_idx = tvb(16, 2):uint()
	local pkt_cnt = tvb(18, 2):uint()
	local idx_item = t:add(f.pkt_idx, tvb(16, 2))
	item = t:add(f.pkt_cnt, tvb(18, 2))
	if pkt_cnt == 0 or pkt_cnt > MAX_PKTS then
		item:add_proto_expert_info(e.bad_pkt_count, string.format(
			"Packet count %u not in 1..%u", pkt_cnt, MAX_PKTS))
	elseif pkt_idx >= pkt_cnt then
		idx_item:add_proto_expert_info(e.bad_pkt_index)
	end

	local payload_len = tvb(20, 2):uint()
	local room = len - HDR_LEN
	item = t:add(f.payload_len, tvb(20, 2))
	if payload_len > room then
		item:add_proto_expert_info(e.bad_payload_len, string.format(
			"Payload length %u, only %u bytes after the header",
			payload_len, room))
	end

	local status = tvb(22, 2):uint()
	t:add(f.status, tvb(22, 2))
	t:add(f.svc_hint_ns, tvb(24, 4))
	t:add(f.work_ns, tvb(28, 4))
	t:add(f.client_ts, tvb(32, 8))
	t:add(f.server_core, tvb(40, 2))
	t:add(f.reserved, tvb(42, 2))
	t:add(f.service_ns, tvb(44, 4))

	local shown = math.min(payload_len, room)
	if shown > 0 then
		t:add(f.payload, tvb(HDR_LEN, shown))
	end
	if room > shown then
		t:add(f.trailer, tvb(HDR_LEN + shown, room - shown))
	end

	t:append_text(", " .. info_text(mtype, req_id, pkt_idx, pkt_cnt,
		status))
	pinfo.cols.info = info_text(mtype, req_id, pkt_idx, pkt_cnt, status)
	return len
end

local udp_port = DissectorTable.get("udp.port")
local registered_port = turbolb.prefs.udp_port
udp_port:add(registered_port, turbolb)

-- Moves the registration when the preference changes.
function turbolb.prefs_changed()
	if turbolb.prefs.udp_port == registered_port then
		return
	end
	udp_port:remove(registered_port, turbolb)
	registered_port = turbolb.prefs.udp_port
	if registered_port ~= 0 then
		udp_port:add(registered_port, turbolb)
	end
end

-- ---- memcached's UDP frame header ----

local MC_HDR_LEN = 8
local MC_DEFAULT_PORT = 11211

local mcudp = Proto("mcudp", "memcached UDP frame")
local mf = mcudp.fields
mf.req_id = ProtoField.uint16("mcudp.req_id", "Request id", base.HEX)
mf.seq = ProtoField.uint16("mcudp.seq", "Sequence number", base.DEC)
mf.total = ProtoField.uint16("mcudp.total", "Total datagrams", base.DEC)
mf.reserved = ProtoField.uint16("mcudp.reserved", "Reserved", base.HEX)
mf.data = ProtoField.bytes("mcudp.data", "Continuation data")

-- The same drop-reason names as the daemon's parser.
local me = {
	trunc_msg = ProtoExpert.new("mcudp.trunc_msg",
		"Shorter than the frame header", expert.group.MALFORMED,
		expert.severity.ERROR),
	bad_pkt_count = ProtoExpert.new("mcudp.bad_pkt_count",
		"A request must be one datagram (total 1)",
		expert.group.MALFORMED, expert.severity.ERROR),
	bad_pkt_index = ProtoExpert.new("mcudp.bad_pkt_index",
		"Sequence number not below the total",
		expert.group.MALFORMED, expert.severity.ERROR),
}
mcudp.experts = { me.trunc_msg, me.bad_pkt_count, me.bad_pkt_index }

mcudp.prefs.udp_port = Pref.uint("UDP port", MC_DEFAULT_PORT,
	"UDP port of memcached (requests go to it, responses come from it)")

-- Wireshark's memcache dissector for the text; nil if this Wireshark has
-- none (Dissector.get raises an error for an unknown name).
local memcache
do
	local ok, d = pcall(Dissector.get, "memcache.udp")
	if ok then
		memcache = d
	end
end

function mcudp.dissector(tvb, pinfo, tree)
	local len = tvb:len()
	local request = pinfo.dst_port == mcudp.prefs.udp_port

	pinfo.cols.protocol = "MCUDP"
	local t = tree:add(mcudp, tvb(0, math.min(len, MC_HDR_LEN)))
	if len < MC_HDR_LEN then
		t:add_proto_expert_info(me.trunc_msg, string.format(
			"Only %u bytes, the frame header has %u", len,
			MC_HDR_LEN))
		pinfo.cols.info = "Truncated memcached UDP frame header"
		return len
	end
	local id = tvb(0, 2):uint()
	local seq = tvb(2, 2):uint()
	local total = tvb(4, 2):uint()
	t:add(mf.req_id, tvb(0, 2))
	local seq_item = t:add(mf.seq, tvb(2, 2))
	local total_item = t:add(mf.total, tvb(4, 2))
	t:add(mf.reserved, tvb(6, 2))
	if request and total ~= 1 then
		total_item:add_proto_expert_info(me.bad_pkt_count)
	elseif request and seq ~= 0 then
		seq_item:add_proto_expert_info(me.bad_pkt_index)
	elseif total ~= 0 and seq >= total then
		seq_item:add_proto_expert_info(me.bad_pkt_index)
	end

	local info = string.format("%s id=0x%04x datagram %u/%u",
		request and "Request" or "Response", id, seq + 1, total)
	if total == 0 then
		info = string.format("Response id=0x%04x header only", id)
	end
	t:append_text(", " .. info)

	-- The text protocol starts in datagram 0; later datagrams continue
	-- a value, which the memcache dissector cannot parse on its own.
	pinfo.cols.info = info
	if len > MC_HDR_LEN then
		local rest = tvb(MC_HDR_LEN):tvb()
		if seq == 0 and memcache ~= nil then
			memcache:call(rest, pinfo, tree)
			pinfo.cols.info:prepend(info .. ": ")
		else
			tree:add(mf.data, rest())
		end
	end
	pinfo.cols.protocol = "MCUDP"
	return len
end

local mc_port = mcudp.prefs.udp_port
udp_port:add(mc_port, mcudp)

function mcudp.prefs_changed()
	if mcudp.prefs.udp_port == mc_port then
		return
	end
	udp_port:remove(mc_port, mcudp)
	mc_port = mcudp.prefs.udp_port
	if mc_port ~= 0 then
		udp_port:add(mc_port, mcudp)
	end
end
