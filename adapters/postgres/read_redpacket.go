package postgres

import (
	"context"
	"strconv"

	"github.com/jackc/pgx/v5"

	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/fault"
	"github.com/tokenscope/tokenscope/domain/page"
	"github.com/tokenscope/tokenscope/domain/redpacket"
	"github.com/tokenscope/tokenscope/ports"
)

// Red packets and claims are listed newest first by their insertion sequence, which every
// red packet index ends with.
var (
	packetKeys = keyset{kind: "redpacket", desc: true, parts: []keyPart{{"p.seq", "bigint"}}}
	claimKeys  = keyset{kind: "redpacket-claim", desc: true, parts: []keyPart{{"c.seq", "bigint"}}}
)

type packetRow struct {
	redpacket.RedPacket
	seq int64
}

type claimRow struct {
	redpacket.Claim
	seq int64
}

func packetConds(f ports.RedPacketFilter, a *args) []string {
	var conds []string
	if f.Creator != "" {
		conds = append(conds, "p.creator = "+a.add(f.Creator))
	}
	if f.Chain != "" {
		conds = append(conds, "p.chain = "+a.add(string(f.Chain)))
	}
	return conds
}

func packetsSQL(f ports.RedPacketFilter, p ports.PageRequest) (string, []any, error) {
	pos, err := packetKeys.position(p)
	if err != nil {
		return "", nil, err
	}
	a := &args{}
	conds := packetConds(f, a)
	cond, order := packetKeys.clause(p.Direction, pos, a)
	conds = append(conds, cond)
	return `SELECT p.seq, p.id, p.chain, p.creator, p.claim_authority, p.mint, p.max_claims, p.claimed_count, p.total_amount,
		p.claimed_amount, p.refunded_amount, p.created_at_ms, p.expired_at_ms, p.expiration, p.expired, p.memo, p.share_id, p.tx_hash
	FROM red_packets p WHERE ` + where(conds) + ` ORDER BY ` + order + ` LIMIT ` + strconv.Itoa(limitOf(p)), a.vals, nil
}

func packetsCountSQL(f ports.RedPacketFilter) (string, []any) {
	a := &args{}
	return `SELECT count(*) FROM red_packets p WHERE ` + where(packetConds(f, a)), a.vals
}

// ListRedPackets implements ports.RedPacketReader. The page and the count run in one
// repeatable-read snapshot so total always agrees with the rows a client pages through.
func (r *MarketReader) ListRedPackets(ctx context.Context, f ports.RedPacketFilter, p ports.PageRequest) (ports.Counted[redpacket.RedPacket], error) {
	var out ports.Counted[redpacket.RedPacket]
	sql, vals, err := packetsSQL(f, p)
	if err != nil {
		return out, err
	}
	err = pgx.BeginTxFunc(ctx, r.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		// hand-built: keyset page (packetsSQL) with optional filters, next or prev from a cursor.
		rows, err := tx.Query(ctx, sql, vals...)
		if err != nil {
			return err
		}
		list, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (packetRow, error) {
			var pr packetRow
			var c string
			err := row.Scan(&pr.seq, &pr.ID, &c, &pr.Creator, &pr.ClaimAuthority, &pr.Mint, &pr.MaxClaims, &pr.ClaimedCount,
				&pr.TotalAmount, &pr.ClaimedAmount, &pr.RefundedAmount, &pr.CreatedAt, &pr.ExpiredAt, &pr.Expiration,
				&pr.Expired, &pr.Memo, &pr.ShareID, &pr.TxHash)
			pr.Chain = chain.Chain(c)
			return pr, err
		})
		if err != nil {
			return err
		}
		csql, cvals := packetsCountSQL(f)
		// hand-built: the count of packetsSQL's optional filters.
		if err := tx.QueryRow(ctx, csql, cvals...).Scan(&out.Total); err != nil {
			return err
		}
		pg := page.Build(list, limitOf(p)-1, p.Direction, p.Cursor != "", func(pr packetRow) string {
			return page.Encode(packetKeys.kind, strconv.FormatInt(pr.seq, 10))
		})
		out.Page = unwrap(pg, func(pr packetRow) redpacket.RedPacket { return pr.RedPacket })
		return nil
	})
	if err != nil {
		return ports.Counted[redpacket.RedPacket]{}, interpretError(err, "list red packets", f.Creator)
	}
	return out, nil
}

func claimsSQL(packetID string, p ports.PageRequest) (string, []any, error) {
	pos, err := claimKeys.position(p)
	if err != nil {
		return "", nil, err
	}
	a := &args{}
	conds := []string{"c.packet_id = " + a.add(packetID)}
	cond, order := claimKeys.clause(p.Direction, pos, a)
	conds = append(conds, cond)
	return `SELECT c.seq, c.packet_id, c.claimer, c.chain, c.mint, c.creator, c.amount, c.claimed_at_ms, c.tx_hash
	FROM red_packet_claims c WHERE ` + where(conds) + ` ORDER BY ` + order + ` LIMIT ` + strconv.Itoa(limitOf(p)), a.vals, nil
}

// ListClaims implements ports.RedPacketReader.
func (r *MarketReader) ListClaims(ctx context.Context, packetID string, p ports.PageRequest) (ports.Counted[redpacket.Claim], error) {
	var out ports.Counted[redpacket.Claim]
	sql, vals, err := claimsSQL(packetID, p)
	if err != nil {
		return out, err
	}
	err = pgx.BeginTxFunc(ctx, r.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		// The packet exists in this snapshot (no row: NotFound).
		if _, err := r.q.RedPacketClaimedCount(ctx, tx, packetID); err != nil {
			return err
		}
		// hand-built: keyset page (claimsSQL), next or prev from a cursor.
		rows, err := tx.Query(ctx, sql, vals...)
		if err != nil {
			return err
		}
		list, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (claimRow, error) {
			var cr claimRow
			var c string
			err := row.Scan(&cr.seq, &cr.PacketID, &cr.Claimer, &c, &cr.Mint, &cr.Creator, &cr.Amount, &cr.ClaimedAt, &cr.TxHash)
			cr.Chain = chain.Chain(c)
			return cr, err
		})
		if err != nil {
			return err
		}
		// A packet's claims number at most its maxClaims, so counting them is bounded by the packet.
		if out.Total, err = r.q.CountRedPacketClaims(ctx, tx, packetID); err != nil {
			return err
		}
		pg := page.Build(list, limitOf(p)-1, p.Direction, p.Cursor != "", func(cr claimRow) string {
			return page.Encode(claimKeys.kind, strconv.FormatInt(cr.seq, 10))
		})
		out.Page = unwrap(pg, func(cr claimRow) redpacket.Claim { return cr.Claim })
		return nil
	})
	if err != nil {
		if _, ok := fault.As(err); ok {
			return ports.Counted[redpacket.Claim]{}, err
		}
		return ports.Counted[redpacket.Claim]{}, interpretError(err, "red packet", packetID)
	}
	return out, nil
}
